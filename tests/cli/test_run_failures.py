"""How ``segue run`` and ``segue chat`` fail, through real processes (SPEC.md §5, R22):

* ``run --json`` prints its closing object (with ``text`` and ``usage``) also when the run
  fails before its turn (a missing key, an unreadable or malformed script);
* a ``fallbackModel`` whose key is missing does not block runs that never need it, and
  when it is needed the error names the setting;
* a failed send does not leave its message behind to be replayed: it stays in the
  transcript, quarantined with the failure, and the next request does not carry it;
* every error is printed once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from segue import HistoryStore, Layout, Row

WS = "fails"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SEGUE_HOME")


def segue(
    home: Path, cwd: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in KEYS}
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WS, *args],
        cwd=cwd, env=environ, input=stdin if stdin is not None else "",
        capture_output=True, text=True, timeout=120, check=False,
    )


def script(path: Path, responses: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"contextWindow": 8000, "encoding": "o200k_base",
                                "requestLog": f"{path.stem}-requests.jsonl",
                                "responses": responses}))
    return f"scripted:{path}"


def requests(path: Path) -> list[list[tuple[str, str]]]:
    """Each logged request's messages as (role, text)."""
    log = path.with_name(f"{path.stem}-requests.jsonl")
    return [
        [(m["role"], "".join(p.get("text", "") for p in m["parts"]))
         for m in json.loads(line)["messages"]]
        for line in log.read_text().splitlines()
    ]


def closing(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(obj) == {"status", "reason", "windowId", "rollovers", "text", "usage"}
    return obj


def rows(home: Path) -> list[Row]:
    return list(HistoryStore(Layout(home, WS)).rows())


def set_setting(home: Path, cwd: Path, key: str, value: str) -> None:
    proc = segue(home, cwd, "settings", "set", key, value)
    assert proc.returncode == 0, proc.stderr


FAIL = {"error": {"kind": "provider", "message": "upstream 503"}}


# -- run --json: the closing object -----------------------------------------------------------


def test_a_completed_run_carries_text_and_usage(tmp_path: Path) -> None:
    model = script(tmp_path / "s.json", [{"text": "Hello."}])
    proc = segue(tmp_path / "home", tmp_path, "run", "--json", "-m", model, "hi")
    assert proc.returncode == 0, proc.stderr
    obj = closing(proc)
    assert obj["status"] == "completed" and obj["text"] == "Hello."
    assert obj["usage"]["inputTokens"] > 0 and obj["usage"]["outputTokens"] > 0


def test_setup_failures_print_the_closing_object_and_the_error_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "broken.json").write_text("{")
    cases = {  # what it says, and the exit status: a missing key is no bad usage (SPEC §5)
        "openai:gpt-4o": ("OPENAI_API_KEY", 1),
        f"scripted:{tmp_path / 'missing.json'}": ("cannot be read", 2),
        f"scripted:{tmp_path / 'broken.json'}": ("not valid JSON", 2),
    }
    for model, (says, status) in cases.items():
        proc = segue(home, tmp_path, "run", "--json", "-m", model, "hi")
        assert proc.returncode == status, (model, proc.stderr)
        obj = closing(proc)
        assert obj["status"] == "error" and says in obj["reason"]
        assert obj["text"] is None and obj["usage"] is None and obj["windowId"] == "w:0"
        assert proc.stderr.count(says) == 1, proc.stderr  # printed once
        assert "Traceback" not in proc.stderr
    assert rows(home) == []


# -- fallbackModel -----------------------------------------------------------------------------


def test_a_fallback_without_its_key_does_not_block_a_run_that_does_not_need_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    set_setting(home, tmp_path, "fallbackModel", "anthropic:claude-sonnet-4-5")
    model = script(tmp_path / "s.json", [{"text": "fine"}])
    proc = segue(home, tmp_path, "run", "--json", "-m", model, "hi")
    assert proc.returncode == 0, proc.stderr
    assert closing(proc)["text"] == "fine"


def test_a_needed_fallback_without_its_key_names_the_setting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    set_setting(home, tmp_path, "fallbackModel", "anthropic:claude-sonnet-4-5")
    model = script(tmp_path / "s.json", [FAIL])
    proc = segue(home, tmp_path, "run", "--json", "-m", model, "hi")
    assert proc.returncode == 1, proc.stderr
    reason = closing(proc)["reason"]
    assert closing(proc)["status"] == "error"
    for part in ("upstream 503", "fallbackModel", "anthropic:claude-sonnet-4-5",
                 "ANTHROPIC_API_KEY"):
        assert part in reason, reason
    assert proc.stderr.count("fallbackModel") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_fallback_answers_when_the_primary_fails(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fallback = tmp_path / "fallback.json"
    set_setting(home, tmp_path, "fallbackModel", script(fallback, [{"text": "from the fallback"}]))
    primary = script(tmp_path / "s.json", [FAIL])
    proc = segue(home, tmp_path, "run", "--json", "-m", primary, "hi")
    assert proc.returncode == 0, proc.stderr
    assert closing(proc)["text"] == "from the fallback"
    # The fallback got the same request the primary was sent.
    assert requests(fallback) == requests(tmp_path / "s.json") == [[("user", "hi")]]


# -- failed sends --------------------------------------------------------------------------------


def test_failed_sends_leave_no_prompt_to_replay(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = tmp_path / "s.json"
    model = script(path, [FAIL, FAIL, FAIL, {"text": "You asked nothing I answered."}])
    for _ in range(3):
        proc = segue(home, tmp_path, "run", "--json", "-m", model, "hi")
        assert proc.returncode == 1, proc.stderr
        obj = closing(proc)
        assert obj["status"] == "error" and "never sent again" in obj["reason"]
        assert proc.stderr.count("upstream 503") == 1, proc.stderr
    proc = segue(home, tmp_path, "run", "--json", "-m", model, "what did I ask?")
    assert proc.returncode == 0, proc.stderr
    # Each request held only its own message: nothing of the failed sends was replayed.
    assert requests(path) == [[("user", "hi")]] * 3 + [[("user", "what did I ask?")]]

    # Nothing was lost: the three messages stay in the transcript, shown as not answered.
    stored = rows(home)
    assert [r.role for r in stored] == ["assistant"] * 3 + ["user", "assistant"]
    for row in stored[:3]:
        assert row.flag("contextBudgetRejected") and row.metadata["sendFailure"] == "upstream 503"
        assert row.metadata["contextBudgetRejectedMessage"]["parts"][0]["text"] == "hi"
    shown = segue(home, tmp_path, "history", "read", "0")
    assert shown.returncode == 0, shown.stderr
    assert "hi" in shown.stdout and "no answer: the model failed (upstream 503)" in shown.stdout
    assert segue(home, tmp_path, "history", "verify").returncode == 0


def test_a_failed_chat_message_is_not_sent_with_the_next_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = tmp_path / "s.json"
    model = script(path, [FAIL, {"text": "answered"}])
    proc = segue(home, tmp_path, "chat", "-m", model, stdin="hi\nwhat did I ask?\n")
    assert proc.returncode == 0, proc.stderr
    assert requests(path) == [[("user", "hi")], [("user", "what did I ask?")]]
    assert (proc.stdout + proc.stderr).count("upstream 503") == 1  # printed once
    assert "answered" in proc.stdout


def test_a_failure_after_a_settled_step_keeps_the_message(tmp_path: Path) -> None:
    """Once a step settled the message started real work: it stays as it is, and the next
    request carries it with the step (the model needs both to go on)."""
    home = tmp_path / "home"
    path = tmp_path / "s.json"
    step = {"text": "Looking.", "toolCalls": [{"name": "file_search", "input": {"pattern": "*"}}]}
    model = script(path, [step, FAIL, {"text": "done"}])
    assert segue(home, tmp_path, "run", "-m", model, "look around").returncode == 1
    assert segue(home, tmp_path, "run", "-m", model, "go on").returncode == 0
    first, _, last = requests(path)
    assert first == [("user", "look around")]
    assert [role for role, _ in last] == ["user", "assistant", "user"]
    assert last[0] == ("user", "look around") and last[-1] == ("user", "go on")
    assert not any(r.flag("contextBudgetRejected") for r in rows(home))
