"""`/settings set` in the chat stores a relative ``scripted:`` path absolute, as
`segue settings set` does: the setting then works from every directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.chat.helpers import chat


def test_a_relative_scripted_model_is_stored_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = chat(tmp_path, [])
    monkeypatch.chdir(tmp_path / "work")
    status, _ = c.run(["/settings set model scripted:../script.json"])
    assert status == 0
    saved = json.loads((c.layout.home / "settings.json").read_text())
    assert saved == {"model": f"scripted:{tmp_path / 'script.json'}"}
    assert "[segue] error:" not in c.text
