"""``segue run`` with the scripted provider: a look-back whose result fills the window is not
lost to the rollover it causes (R3, R5, R6, R21). The fresh window quotes the request that owns
the turn and carries the look-back's call with its result, so the model can answer from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from segue import HistoryStore, Layout
from tests.front import cli, is_rollover_boundary, logged_requests

WS = "lookback"
CODE = "4711-0815"
#: An earlier message of about 1,500 tokens that holds the detail the model looks up later.
REPORT = (
    f"Audit notes. The vault code is {CODE}. "
    + "Each ledger line was checked against the signed transfer slips and the bank export. " * 100
)
QUESTION = "What was the vault code in the audit notes?"
#: The first run's message is the transcript's first item: its first 5,000 characters (about
#: 900 tokens, under the settled-output guard's quarter of the hard ceiling, R17).
LOOK_BACK = {"action": "read_item", "item_id": "0", "limit_chars": 5000}


def segue(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", WS, *args])


def write_script(tmp: Path, responses: list[dict[str, Any]]) -> str:
    # 6,000 tokens: at the default threshold (70) R3 rolls over at 75%, 4,500 tokens, which
    # is also the hard ceiling (6,000 less 1,500 for output): the exec agent's tool schemas,
    # the notes, the look-back result and a lead-in fit a fresh window, but not the old one.
    path = tmp / "script.json"
    path.write_text(
        json.dumps(
            {
                "contextWindow": 6000,
                "encoding": "o200k_base",
                "requestLog": "requests.jsonl",
                "responses": responses,
            }
        )
    )
    return f"scripted:{path}"


def test_a_look_back_survives_the_rollover_it_causes(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    assert segue(segue_home, "settings", "set", "experiments.tokenBudget", "true").exit_code == 0
    model = write_script(
        tmp_path,
        [
            {"text": "Noted."},
            {"toolCalls": [{"name": "session_history", "input": LOOK_BACK}]},
            {"text": f"The vault code was {CODE}."},
        ],
    )
    first = segue(segue_home, "run", "-m", model, "--json", REPORT)
    assert first.exit_code == 0, first.output
    second = segue(segue_home, "run", "-m", model, "--json", QUESTION)
    assert second.exit_code == 0, second.output
    closing = json.loads(second.stdout.strip().splitlines()[-1])
    assert closing["status"] == "completed" and closing["rollovers"] == 1

    rows = list(HistoryStore(Layout(segue_home, WS)).rows())
    (boundary,) = [r for r in rows if is_rollover_boundary(r)]
    at = rows.index(boundary)
    # The look-back's own step filled the window: the rollover is right after it.
    assert rows[at - 1].parts[0].toolName == "session_history"
    assert boundary.metadata["muxMetadata"]["reason"] == "mid-stream"

    log = tmp_path / "requests.jsonl"
    requests = logged_requests(log)
    after = requests[-1]
    lead_in = after.rows[0]
    assert lead_in.mux_type == "context-window-lead-in"
    assert f"fresh context window (w:{boundary.sequence})" in lead_in.text
    assert f"<request>\n{QUESTION}\n</request>" in lead_in.text
    # The look-back's result is in what the model sees next, and REPORT itself is not.
    results = [p.output for r in after.rows for p in r.parts if p.toolName == "session_history"]
    assert len(results) == 1 and CODE in json.dumps(results[0])
    assert all(REPORT not in r.text for r in after.rows)
    # The carried copy is hidden: the transcript view shows the look-back once.
    shown = segue(segue_home, "history", "items", f"w:{boundary.sequence}", "--json")
    assert shown.exit_code == 0, shown.output
    assert all("session_history" not in json.dumps(i) for i in json.loads(shown.stdout)["items"])
