"""The real ``segue run`` with a scripted model, in a workspace directory of its own, and the
files it leaves on disk (SPEC.md R38)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import segue

SRC = str(Path(segue.__file__).resolve().parents[1])
WORKSPACE = "sec"


@dataclass
class Run:
    proc: subprocess.CompletedProcess[str]
    outputs: list[Any] = field(default_factory=list)


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"text": "", "toolCalls": [{"name": name, "input": args}]}


def bash(command: str) -> dict[str, Any]:
    return call("bash", {"command": command})


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "PYTHONPATH")}
    env["PYTHONPATH"] = SRC
    env.update(extra)
    return env


def segue_cmd(home: Path, cwd: Path, *args: str, env: dict[str, str] | None = None,
              umask: int = 0o022, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, *args],
        cwd=cwd, env=env or environment(), input=stdin, capture_output=True, text=True,
        timeout=120, check=False, umask=umask,
    )


def run(tmp: Path, calls: list[dict[str, Any]], *, approve: str | None = None,
        rules: list[str] | None = None, env: dict[str, str] | None = None,
        umask: int = 0o022) -> Run:
    """``segue run`` in ``tmp/work`` whose model makes ``calls`` one per turn step, with
    the remembered allow ``rules`` for the workspace; the tool results it recorded."""
    home, work = tmp / "home", tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    if rules is not None:
        (home / "approvals").mkdir(parents=True, exist_ok=True)
        (home / "approvals" / f"{WORKSPACE}.json").write_text(json.dumps(
            {"version": 1, "rules": [{"regex_match": r, "action": "allow"} for r in rules]}))
    script = tmp / "script.json"
    script.write_text(json.dumps({"contextWindow": 64000, "encoding": "o200k_base",
                                  "responses": [*calls, {"text": "done"}]}))
    args = ["run", "-m", f"scripted:{script}"]
    if approve is not None:
        args += ["--approve", approve]
    proc = segue_cmd(home, work, *args, "go", env=env, umask=umask)
    assert proc.returncode == 0, proc.stderr
    return Run(proc, outputs(home))


def outputs(home: Path) -> list[Any]:
    chat = home / "sessions" / WORKSPACE / "chat.jsonl"
    rows = [json.loads(x) for x in chat.read_text().splitlines()]
    return [p["output"] for r in rows for p in r["parts"] if p["type"] == "dynamic-tool"]


def git_repo(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"],
                 ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    (work / "f.txt").write_text("one\n")
    subprocess.run(["git", "add", "f.txt"], cwd=work, check=True, capture_output=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=work, check=True, capture_output=True)
    (work / "f.txt").write_text("two\n")
