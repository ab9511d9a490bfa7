"""Calibration: per-family observed ratios, persisted atomically under SEGUE_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from segue._errors import StoreError
from segue._tokens import Calibration, calibration_file


def test_ratio_accumulates_per_family() -> None:
    cal = Calibration().record("claude", 1000, 800).record("claude", 1000, 1000)
    cal = cal.record("openai", 500, 500)
    assert cal.ratio("claude") == pytest.approx(0.9)
    assert cal.families["claude"].min_ratio == pytest.approx(0.8)
    assert cal.families["claude"].max_ratio == pytest.approx(1.0)
    assert cal.ratio("openai") == 1.0
    assert cal.ratio("gemini") is None
    with pytest.raises(ValueError, match="positive"):
        cal.record("claude", 0, 10)


def test_record_persists_and_reloads(segue_home: Path) -> None:
    calibration_file.record(segue_home, "claude", 1200, 1000)
    calibration_file.record(segue_home, "claude", 1000, 1100)
    stored = json.loads((segue_home / "calibration.json").read_text())
    assert stored["version"] == 1
    assert stored["families"]["claude"]["samples"] == 2
    loaded = calibration_file.load(segue_home)
    assert loaded.ratio("claude") == pytest.approx(2100 / 2200)
    assert not list(segue_home.glob(".calibration.json.*.tmp"))


def test_missing_file_is_empty_and_damaged_file_is_an_error(segue_home: Path) -> None:
    assert calibration_file.load(segue_home).families == {}
    (segue_home / "calibration.json").write_text('{"version": 1, "families": {"x": 3}}')
    with pytest.raises(StoreError, match="damaged"):
        calibration_file.load(segue_home)
    with pytest.raises(StoreError):
        calibration_file.record(segue_home, "claude", 10, 10)
    assert (segue_home / "calibration.json").read_text().startswith('{"version": 1')
