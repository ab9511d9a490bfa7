"""Shared by the framework tests: reading the transcript from disk, the SPEC §3 row shapes,
and running the command line and the examples as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FILLER = (
    "The quarterly audit walked through the ledgers line by line, noting each transfer, "
    "each signature and each discrepancy that later reviews would need to reconcile. "
) * 12
DETAIL = "The vault code is 4711-0815."
#: R3: a 4,000-token window at the default threshold (70) rolls over at 75% of it, which is
#: also its hard ceiling (4,000 less the 1,000 reserved for output).
ROLLS_OVER_AT = 3000
#: the look-back both frameworks' models make for the first chunk's detail
VAULT = {"action": "search", "match": "literal", "query": "vault code", "max_chars_per_item": 2000}


def chunk(n: int) -> str:
    return f"Chunk {n}. {DETAIL if n == 0 else ''} {FILLER}"


def env(home: Path) -> dict[str, str]:
    return {**os.environ, "SEGUE_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}


def run_segue(home: Path, workspace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "segue._cli.main", "-w", workspace, *args],
        env=env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_example(home: Path, script: str) -> subprocess.CompletedProcess[str]:
    """``examples/<script>`` as a real process with ``SEGUE_HOME=home``; it must exit 0 and
    print the detail its look-back recovered from the first window."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script)],
        env=env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "4711-0815" in done.stdout
    return done


def windows_json(home: Path, workspace: str) -> list[dict[str, Any]]:
    done = run_segue(home, workspace, "history", "windows", "--json")
    assert done.returncode == 0, done.stderr
    windows: list[dict[str, Any]] = json.loads(done.stdout)["windows"]
    return windows


def disk_rows(home: Path, workspace: str) -> list[dict[str, Any]]:
    """Every row on disk, oldest first: the archive, then chat.jsonl."""
    session = home / "sessions" / workspace
    rows: list[dict[str, Any]] = []
    for name in ("chat-archive.jsonl", "chat.jsonl"):
        path = session / name
        if path.exists():
            rows.extend(json.loads(line) for line in path.read_text().splitlines() if line)
    return rows


def mux(row: dict[str, Any]) -> dict[str, Any]:
    value = row["metadata"].get("muxMetadata")
    return value if isinstance(value, dict) else {}


def rollovers(rows: list[dict[str, Any]]) -> list[int]:
    """Indexes of the rollover boundaries among ``rows``."""
    return [
        i
        for i, r in enumerate(rows)
        if r["metadata"].get("contextBoundaryKind") == "reset"
        and mux(r).get("type") == "context-window-rollover"
    ]


def assert_rollover_shapes(
    rows: list[dict[str, Any]], index: int, *, human_trigger: bool = False
) -> None:
    """The batch at ``index``: boundary, lead-in, trigger (the human's message, or a
    synthetic continuation), in the shapes of SPEC §3."""
    boundary, lead_in, trigger = rows[index : index + 3]
    assert boundary["role"] == "assistant"
    assert boundary["parts"] == []
    meta = mux(boundary)
    assert isinstance(meta["rolloverId"], str)
    assert meta["reason"] in ("on-send", "mid-stream", "context-exceeded")
    assert isinstance(meta["previousWindowId"], str) and meta["previousWindowId"].startswith("w:")
    assert isinstance(meta["contextTokens"], int) and isinstance(meta["maxTokens"], int)
    assert meta["contextTokens"] >= meta["maxTokens"] * 75 // 100 or meta.get("requestedBy")
    assert lead_in["role"] == "user"
    assert [p["type"] for p in lead_in["parts"]] == ["text"]
    assert "session_history" in lead_in["parts"][0]["text"]
    assert lead_in["metadata"]["synthetic"] is True
    assert lead_in["metadata"]["uiVisible"] is False
    assert mux(lead_in) == {"type": "context-window-lead-in", "rolloverId": meta["rolloverId"]}
    assert trigger["role"] == "user"
    if human_trigger:
        # The human's own message: provider-visible and UI-visible.
        assert meta["reason"] == "on-send"
        assert trigger["metadata"].get("synthetic") is not True
        assert trigger["metadata"].get("uiVisible") is not False
    else:
        assert trigger["metadata"]["synthetic"] is True
        assert trigger["metadata"]["uiVisible"] is False
    seqs = [r["metadata"]["historySequence"] for r in (boundary, lead_in, trigger)]
    assert seqs == list(range(seqs[0], seqs[0] + 3))


def assert_quarantined(row: dict[str, Any], word: str) -> None:
    """``row`` is a human message kept transcript-only (R22): no parts, the original (which
    holds ``word``) in its metadata."""
    assert row["role"] == "assistant" and row["parts"] == []
    assert row["metadata"]["contextBudgetRejected"] is True
    original = row["metadata"]["contextBudgetRejectedMessage"]
    assert original["role"] == "user" and word in original["parts"][0]["text"]
