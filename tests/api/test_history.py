"""``segue.open_history``: the owner's view (complete, floored unless asked) and the model's
view (exactly what ``session_history`` and ``segue history tool`` answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import segue
from segue._cli.main import cli
from tests.api.helpers import script

WS = "hist"


def _files(home: Path) -> dict[str, int]:
    return {str(p.relative_to(home)): p.stat().st_mtime_ns
            for p in home.rglob("*") if p.is_file()}


def _cli(home: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--home", str(home), "-w", WS, *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A workspace: two turns, a /clear --soft (the floor), then three more turns."""
    work = tmp_path / "work"
    work.mkdir()
    replies = ["noted alpha", "noted again", "noted beta", "noted gamma", "noted delta"]
    model = script(tmp_path / "s.json", *({"text": t} for t in replies))
    with segue.open_session(WS, home=tmp_path / "home", workdir=work, model=model,
                            experiment=True) as session:
        session.send("my secret alpha")
        session.send("once more")
        assert session.clear_soft()
        for word in ("beta", "gamma", "delta"):
            session.send(f"about {word}")
    return tmp_path / "home"


def test_the_owner_view_starts_at_the_floor_by_default(home: Path) -> None:
    history = segue.open_history(WS, home=home)
    (window,) = history.windows()
    assert window.kind == "reset" and window.items == 6
    assert history.search("alpha") == []
    hits = history.search("NOTED", role="assistant")
    assert [h.snippet for h in hits] == ["noted beta", "noted gamma", "noted delta"]
    first = history.items(window.window_id)[0]
    assert (first.role, first.label, first.text) == ("user", "user", "about beta")
    with pytest.raises(segue.NotFound, match=r"above the privacy floor.*include_cleared"):
        history.read("0")  # the first message, before the floor
    with pytest.raises(segue.NotFound):
        history.items("w:0")


def test_include_cleared_is_what_segue_history_shows(home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    history = segue.open_history(WS, home=home, include_cleared=True)
    windows = history.windows()
    assert [w.kind for w in windows] == ["root", "reset"]
    cli_windows = _cli(home, "history", "windows", "--json")["windows"]
    assert [{"windowId": w.window_id, "kind": w.kind, "firstItemId": w.first_item_id,
             "lastItemId": w.last_item_id, "items": w.items} for w in windows] == cli_windows
    (item,) = history.read("#0")
    assert item.text == "my secret alpha"
    cli_items = _cli(home, "history", "items", "w:0", "--json")["items"]
    assert [{"itemId": i.item_id, "windowId": i.window_id, "role": i.role,
             "timestamp": i.timestamp, "text": i.text} for i in history.items("w:0")] == cli_items
    assert [h.item_id for h in history.search("alpha")] == ["0", "1"]
    scanned = history.search("noted")
    assert scanned, "the scan found nothing: comparing it with the index would prove nothing"
    assert not (home / "sessions" / WS / "history-index.sqlite").exists()
    CliRunner().invoke(cli, ["--home", str(home), "-w", WS, "history", "reindex"])
    assert (home / "sessions" / WS / "history-index.sqlite").exists()
    def no_scan(*_args: object, **_kw: object) -> None:
        raise AssertionError("scanned although the index is trusted")

    monkeypatch.setattr("segue._views.windows.search", no_scan)
    assert history.search("noted") == scanned  # from the index now: the same answer


def test_the_model_view_is_the_tools_answer(home: Path) -> None:
    model = segue.open_history(WS, home=home).as_model()
    calls: list[dict[str, Any]] = [
        {"action": "list_windows"},
        {"action": "search", "query": "noted", "order": "oldest"},
        {"action": "search", "query": "alpha"},
        {"action": "read_item", "item_id": "0"},
        {"action": "list_items", "window_id": "w:0"},
        {"action": "search"},
    ]
    answers = [model.call(c) for c in calls]
    for call, answer in zip(calls, answers, strict=True):
        expected = _cli(home, "history", "tool", json.dumps(call))
        expected.pop("nextCursor", None)
        assert {k: v for k, v in answer.items() if k != "nextCursor"} == expected
    assert answers[2]["items"] == []  # the floor holds for the model
    assert answers[3]["error"]["code"] == "item_not_found"
    assert answers[5]["error"]["code"] == "query_required"
    assert model.search("noted", order="oldest") == {**answers[1], "nextCursor": None}
    # The owner's default view and the model agree on where the windows are.
    owner = segue.open_history(WS, home=home).windows()
    assert [(w["windowId"], w["kind"]) for w in answers[0]["windows"]] == [
        (w.window_id, w.kind) for w in owner]


def test_pages_follow_the_cursors(home: Path) -> None:
    model = segue.open_history(WS, home=home).as_model()
    pages = list(model.pages({"action": "search", "query": "noted", "limit": 1}))
    assert all(p["ok"] and len(p["items"]) <= 1 for p in pages)
    assert [i["text"] for p in pages for i in p["items"]] == [
        "noted delta", "noted gamma", "noted beta"]
    assert pages[-1]["nextCursor"] is None


def test_an_undecodable_floor_counts(home: Path) -> None:
    """A line that is not a row but holds the reset key is a floor (R11): both views start
    after it and name its window alike."""
    chat = home / "sessions" / WS / "chat.jsonl"
    with chat.open("ab") as f:
        f.write(b'{"contextBoundaryKind": "reset", \xff not json\n')
    owner = segue.open_history(WS, home=home)
    (window,) = owner.windows()
    assert window.window_id.startswith("w:raw:") and window.items == 0
    assert owner.search("noted") == []
    answer = owner.as_model().list_windows()
    assert [w["windowId"] for w in answer["windows"]] == [window.window_id]
    assert len(segue.open_history(WS, home=home, include_cleared=True).search("noted")) == 5


def test_reading_writes_nothing(home: Path) -> None:
    before = _files(home)
    for include in (False, True):
        history = segue.open_history(WS, home=home, include_cleared=include)
        history.windows()
        history.search("noted")
        history.read(str(history.windows()[-1].last_item_id))
        model = history.as_model()
        model.search("noted")
        model.list_windows()
    assert _files(home) == before


def test_which_workspace(home: Path, tmp_path: Path) -> None:
    with pytest.raises(segue.NotFound, match="no workspace 'typo'"):
        segue.open_history("typo", home=home)
    with pytest.raises(segue.UsageError, match="invalid window id 'bogus'") as caught:
        segue.open_history(WS, home=home).items("bogus")
    assert "segue history" not in str(caught.value)
    with pytest.raises(segue.UsageError, match="must not be empty"):
        segue.open_history(WS, home=home).search("")
    model = script(tmp_path / "again.json", {"text": "fresh"})
    with segue.open_session(WS, home=home, workdir=tmp_path / "work", model=model) as s:
        s.send("again")
        assert segue.open_history(s).search("fresh")[0].window_id != "w:0"
