"""A real ``segue run`` SIGKILL'd at pinned points *inside* the rollover batch's append (R5,
R8, R28): whatever the point, the batch is on disk whole or not at all, and ``segue history
verify`` exits 0 once a locked operation has recovered.

The rollover is the one the model asks for with ``new_context`` (R37). The process is the
ordinary command line, started through a small launcher that wraps the store's own write and
rotation steps: at the chosen point it tells the test over a pipe and waits, and the test
sends ``kill -9``. No sleeps: the test blocks on the pipe.

Points: ``receipt`` (the pending receipt is written, no batch byte yet), ``half`` (half the
batch's bytes are in ``chat.jsonl``), ``whole`` (every byte written, before the fsync and the
stable receipt), ``rotation`` (the batch is durable, the rotation it calls for has not run).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from segue import HistoryStore, Layout, Row
from tests.front import cli, is_rollover_boundary

WS = "killed-append"
TIMEOUT = 60.0
POINTS = ("receipt", "half", "whole", "rotation")
BATCH_TYPES = ("context-window-rollover", "context-window-lead-in")

LAUNCHER = textwrap.dedent(
    """
    import os, signal, sys

    import segue._history.store as store

    point, fd = sys.argv[1], int(sys.argv[2])
    write_all, rotate = store.write_all, store.rotate


    def stop():
        os.write(fd, b"pinned\\n")
        while True:
            signal.pause()


    def pinned_write(out, data):
        if b"context-window-rollover" not in data:
            return write_all(out, data)
        if point == "half":
            os.write(out, data[: len(data) // 2])
            stop()
        if point == "whole":
            write_all(out, data)
            stop()
        if point == "receipt":
            stop()
        return write_all(out, data)


    def pinned_rotate(*args, **kwargs):
        if point == "rotation":
            stop()
        return rotate(*args, **kwargs)


    store.write_all = pinned_write
    store.rotate = pinned_rotate
    from segue._cli.main import main

    sys.argv = ["segue", *sys.argv[3:]]
    sys.exit(main())
    """
)


def segue(home: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", WS, *args])


def rows(home: Path) -> list[Row]:
    """What a reader sees (readers never recover)."""
    return list(HistoryStore(Layout(home, WS), durable=False).rows())


def batch_rows(rs: list[Row]) -> list[Row]:
    return [r for r in rs if r.mux_type in BATCH_TYPES or r.flag("synthetic")]


def assert_whole_or_none(rs: list[Row]) -> bool:
    """The batch is there whole (boundary, lead-in, continuation, contiguous) or not at all;
    returns whether it is there."""
    batch = batch_rows(rs)
    if not batch:
        return False
    (boundary,) = [r for r in rs if is_rollover_boundary(r)]
    at = rs.index(boundary)
    assert [r.id for r in rs[at : at + 3]] == [r.id for r in batch]
    assert rs[at + 1].mux_type == "context-window-lead-in"
    assert rs[at + 2].text == "Continue"
    assert boundary.metadata["muxMetadata"]["requestedBy"] == "model"
    return True


def kill_at(tmp: Path, point: str) -> tuple[Path, str]:
    home, work = tmp / "home", tmp / "work"
    work.mkdir(parents=True)
    model = tmp / "script.json"
    model.write_text(
        json.dumps(
            {
                "contextWindow": 8000,
                "encoding": "o200k_base",
                "responses": [
                    {"toolCalls": [{"name": "new_context", "input": {"reason": "done"}}]},
                    {"text": "after the restart"},
                ],
            }
        )
    )
    assert segue(home, "settings", "set", "experiments.tokenBudget", "true").exit_code == 0
    launcher = tmp / "launcher.py"
    launcher.write_text(LAUNCHER)
    read_end, write_end = os.pipe()
    argv = [
        sys.executable, str(launcher), point, str(write_end),
        "--home", str(home), "-w", WS, "run", "-m", f"scripted:{model}", "--json", "first",
    ]  # fmt: skip
    proc = subprocess.Popen(
        argv, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, pass_fds=(write_end,),
    )  # fmt: skip
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            said = pipe.readline()  # blocks until the pin is reached (EOF if the run ended)
        if said != b"pinned\n":
            _, err = proc.communicate(timeout=TIMEOUT)
            pytest.fail(f"the run ended (rc {proc.returncode}) before {point}: {err.decode()}")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return home, f"scripted:{model}"


@pytest.mark.parametrize("point", POINTS)
def test_kill_inside_the_rollover_append_is_all_or_nothing(tmp_path: Path, point: str) -> None:
    home, model = kill_at(tmp_path, point)
    before = rows(home)
    assert before[0].text == "first"  # the user's message was durable before the rollover
    published = assert_whole_or_none(before)
    if point in ("receipt", "half"):
        assert not published
    if point in ("whole", "rotation"):
        assert published  # every byte was written: recovery keeps the journaled batch
    # verify only reads: it may report what recovery has still to do, never a traceback.
    early = segue(home, "history", "verify")
    assert early.exit_code in (0, 1), early.output
    assert "Traceback" not in early.output

    # The next run is a locked operation: it recovers, then answers the new message.
    restarted = segue(home, "run", "-m", model, "--json", "second")
    assert restarted.exit_code == 0, restarted.output
    closing = json.loads(restarted.stdout.strip().splitlines()[-1])
    assert closing["status"] == "completed" and closing["rollovers"] == 0
    after = rows(home)
    assert assert_whole_or_none(after) == published
    assert sum(is_rollover_boundary(r) for r in after) == int(published)
    sequences = [r.metadata["historySequence"] for r in after]
    assert sequences == sorted(set(sequences))  # strictly increasing: nothing doubled
    assert after[-2].text == "second" and after[-1].text == "after the restart"
    verified = segue(home, "history", "verify")
    assert verified.exit_code == 0, verified.output
