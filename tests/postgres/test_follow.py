"""``segue history follow`` on PostgreSQL, as real processes against a real server: the
follower wakes through LISTEN/NOTIFY (the NOTIFY is sent in the append's transaction, so a
rolled-back batch wakes no one and shows nothing), prints what `history items` prints, and
ends on Ctrl-C with 130."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from segue._messages import decode_row
from segue.postgres._keys import notify_channel
from segue.postgres._store import PostgresStore
from segue.postgres._watch import ListenWatch
from tests.cli.follow_proc import Follower, batch_file, lines, ok, reset_row, row, segue

WS = "pg-fleet"


def append(home: Path, url: str, tmp: Path, name: str, rows: list[dict[str, object]]) -> None:
    path = batch_file(tmp / f"{name}.jsonl", rows)
    ok(segue(home, "--store", url, "-w", WS, "history", "import", str(path)))


def test_follow_prints_batches_committed_by_other_processes(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    append(home, pg_url, tmp_path, "old", [row("old", "already there")])
    follower = Follower(home, "--store", pg_url, "-w", WS, "history", "follow")
    try:
        follower.wait_ready()
        for n in range(3):
            append(home, pg_url, tmp_path, f"b{n}", [row(f"a{n}", f"pg batch {n} a"),
                                                    row(f"b{n}", f"pg batch {n} b")])
            want = f"pg batch {n} b"
            follower.wait_for(lambda out: want in out, want)  # noqa: B023
        got = lines(follower.out)
        listed = ok(segue(home, "--store", pg_url, "-w", WS, "history", "items", "w:0"))
        assert got == listed.decode().splitlines()[1:]
        assert len(got) == 6
        assert follower.interrupt() == 130
        assert "Traceback" not in follower.err
    finally:
        follower.close()


def test_follow_json_floor_and_projection(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    append(home, pg_url, tmp_path, "old", [row("old", "already there")])
    follower = Follower(home, "--store", pg_url, "-w", WS, "history", "follow", "--json")
    try:
        follower.wait_ready()
        append(home, pg_url, tmp_path, "f", [
            row("hid", "hidden synthetic row", synthetic=True),
            row("pre", "before the floor"), reset_row("reset"), row("post", "after the floor"),
        ])
        follower.wait_for(lambda out: "after the floor" in out, "the row after the floor")
        items = [json.loads(line) for line in lines(follower.out)]
        assert [i["text"] for i in items] == ["after the floor"]
        assert items[0]["windowId"] != "w:0"
        assert follower.interrupt() == 130
    finally:
        follower.close()


def test_items_follow_on_postgres(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    append(home, pg_url, tmp_path, "old", [row("old", "listed first")])
    follower = Follower(home, "--store", pg_url, "-w", WS, "history", "items", "w:0", "-f")
    try:
        follower.wait_ready()
        append(home, pg_url, tmp_path, "new", [row("new", "followed next")])
        out = follower.wait_for(lambda o: "followed next" in o, "the followed batch")
        assert [line.rsplit("UTC  ", 1)[1] for line in lines(out)] == [
            "listed first", "followed next"
        ]
    finally:
        follower.close()


def test_an_append_notifies_its_workspace_at_commit_only(pg_url: str) -> None:
    watch = ListenWatch(pg_url, WS)
    other = ListenWatch(pg_url, "another-workspace")
    store = PostgresStore(pg_url, WS)
    try:
        assert watch.wait(0.05) is False
        store.append([decode_row(json.dumps(row("n", "wake up")).encode())])
        assert watch.wait(30.0) is True
        assert other.wait(0.05) is False  # another workspace's channel stays quiet
        # a batch that rolls back notifies no one
        with psycopg.connect(pg_url) as conn:
            conn.execute("SELECT pg_notify(%s, '')", (notify_channel(WS),))
            conn.rollback()
        assert watch.wait(0.2) is False
    finally:
        store.close()
        watch.close()
        other.close()
