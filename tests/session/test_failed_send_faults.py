"""A failed send whose withdrawal meets a machine fault: the model's error is still the
turn's answer, the message stays as it was (sent again with the next one, as the notice
says), and nothing is raised to the caller."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from segue import HistoryStore, Notice
from tests.session.helpers import harness


def test_a_full_disk_during_the_withdrawal_keeps_the_model_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness(tmp_path, [{"error": {"kind": "provider"}}, {"text": "answered"}])
    session = h.session()

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(h.layout.chat))

    monkeypatch.setattr(HistoryStore, "quarantine", full_disk)
    result = session.send("hello")
    assert result.status == "error"
    assert result.reason == "scripted provider error"  # not the disk's fault, not withdrawn
    notices = [e.text for e in h.events if isinstance(e, Notice)]
    assert any("will be sent again with the next one" in n and "no space left on device" in n
               for n in notices), notices
    assert [r.text for r in h.rows() if r.role == "user"] == ["hello"]  # kept as it was
    monkeypatch.undo()
    assert session.send("again").text == "answered"
    sent = [r.text for r in h.requests()[-1].rows if r.role == "user"]
    assert sent == ["hello", "again"]
