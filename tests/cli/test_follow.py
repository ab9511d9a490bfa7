"""``segue history follow`` and ``history items -f`` on the JSONL store, as real processes:
a follower and appenders (``segue history import``, ``segue clear --soft``), the output
polled for, Ctrl-C ending the follower with 130 and no traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from segue._history.watch import InotifyWatch, PollWatch
from tests.cli.follow_proc import Follower, batch_file, lines, ok, reset_row, row, segue

WS = "fleet-ws"


def append(home: Path, tmp: Path, name: str, rows: list[dict[str, object]]) -> None:
    ok(segue(home, "-w", WS, "history", "import", str(batch_file(tmp / f"{name}.jsonl", rows))))


def started(home: Path, tmp: Path, *args: str) -> Follower:
    append(home, tmp, "before", [row("old-1", "written before the follower started")])
    follower = Follower(home, "-w", WS, "history", *args)
    follower.wait_ready()
    return follower


def test_follow_prints_each_new_batch_in_order_and_nothing_older(tmp_path: Path) -> None:
    home = tmp_path / "home"
    follower = started(home, tmp_path, "follow")
    try:
        for n in range(3):
            append(home, tmp_path, f"b{n}", [row(f"r{n}a", f"batch {n} first"),
                                            row(f"r{n}b", f"batch {n} second")])
            want = f"batch {n} second"
            follower.wait_for(lambda out: want in out, want)  # noqa: B023
        got = lines(follower.out)
        assert [g.rsplit("UTC  ", 1)[1] for g in got] == [
            f"batch {n} {which}" for n in range(3) for which in ("first", "second")
        ]
        assert "before the follower" not in follower.out
        # the ids are the sequences the appends were given, as `history items` shows them
        listed = ok(segue(home, "-w", WS, "history", "items", "w:0")).decode().splitlines()
        assert got == listed[1:]
        assert follower.interrupt() == 130
        assert "Traceback" not in follower.err
    finally:
        follower.close()


def test_follow_json_applies_the_projection_and_the_floor(tmp_path: Path) -> None:
    home = tmp_path / "home"
    follower = started(home, tmp_path, "follow", "--json")
    try:
        hidden = row("hid", "a synthetic row the user never saw", synthetic=True)
        append(home, tmp_path, "p", [hidden, row("vis", "a visible row")])
        follower.wait_for(lambda out: "a visible row" in out, "the visible row")
        # one batch: a row, a manual reset (the floor), a row: only what follows the floor
        append(home, tmp_path, "f", [row("pre", "above no floor: hidden by the reset"),
                                     reset_row("reset"), row("post", "after the reset")])
        follower.wait_for(lambda out: "after the reset" in out, "the row after the floor")
        items = [json.loads(line) for line in lines(follower.out)]
        assert [i["text"] for i in items] == ["a visible row", "after the reset"]
        assert set(items[0]) == {"itemId", "windowId", "role", "timestamp", "text"}
        assert items[0]["windowId"] == "w:0"
        assert items[1]["windowId"] != "w:0"  # the reset opened a window
        assert follower.interrupt() == 130
    finally:
        follower.close()


def test_follow_sees_batches_from_another_command_and_a_soft_clear(tmp_path: Path) -> None:
    home = tmp_path / "home"
    follower = started(home, tmp_path, "follow")
    try:
        ok(segue(home, "-w", WS, "clear", "--soft"))
        append(home, tmp_path, "after", [row("a1", "written after the clear")])
        out = follower.wait_for(lambda o: "written after the clear" in o, "the new window")
        divider, item = lines(out)
        assert divider.startswith("── window w:") and "reset" in divider
        assert item.endswith("written after the clear")
    finally:
        follower.close()


def test_items_follow_lists_the_window_then_follows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    follower = started(home, tmp_path, "items", "w:0", "-f", "--json")
    try:
        append(home, tmp_path, "next", [row("n1", "the next batch")])
        follower.wait_for(lambda out: "the next batch" in out, "the followed batch")
        texts = [json.loads(line)["text"] for line in lines(follower.out)]
        assert texts == ["written before the follower started", "the next batch"]
    finally:
        follower.close()


def test_items_follow_of_a_missing_window_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    append(home, tmp_path, "one", [row("x", "x")])
    result = segue(home, "-w", WS, "history", "items", "w:99", "-f")
    assert result.returncode == 1
    assert b"no window w:99" in result.stderr and b"Traceback" not in result.stderr


def test_follow_waits_for_a_workspace_with_no_history_yet(tmp_path: Path) -> None:
    home = tmp_path / "home"
    follower = Follower(home, "-w", WS, "history", "follow")
    try:
        follower.wait_ready()
        assert "no history yet" in follower.err
        append(home, tmp_path, "first", [row("f1", "the very first batch")])
        follower.wait_for(lambda out: "the very first batch" in out, "the first batch")
        assert follower.interrupt() == 130
        assert "Traceback" not in follower.err
    finally:
        follower.close()


@pytest.mark.parametrize("kind", ["inotify", "poll"])
def test_watch_wakes_on_a_change_and_not_without_one(tmp_path: Path, kind: str) -> None:
    session = tmp_path / "session"
    session.mkdir()
    chat = session / "chat.jsonl"
    if kind == "inotify":
        opened = InotifyWatch.open(session)
        if opened is None:
            pytest.skip("no inotify here")
        watch: InotifyWatch | PollWatch = opened
    else:
        watch = PollWatch((chat,))
    try:
        assert watch.wait(0.05) is False
        with chat.open("ab") as f:
            f.write(b"{}\n")
            f.flush()
            os.fsync(f.fileno())
        assert watch.wait(30.0) is True
    finally:
        watch.close()
