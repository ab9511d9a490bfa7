"""Parsing typed lines, and the meter's wording (pure)."""

from __future__ import annotations

import pytest

from segue import make_row
from segue._chat import commands as cmd
from segue._chat.meter import label, meter_text, reported_usage


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", None),
        ("  \n", None),
        ("hello\n", cmd.Message("hello")),
        ("  indented stays  ", cmd.Message("  indented stays")),
        ("//etc", cmd.Message("/etc")),
        ("/clear", cmd.Clear(soft=False)),
        ("/CLEAR --soft", cmd.Clear(soft=True)),
        ("/clear --soft now", cmd.Invalid("/clear [--soft]")),
        ("/compact", cmd.Compact()),
        ("/settings", cmd.SettingsShow()),
        ("/settings show", cmd.SettingsShow()),
        ("/settings set model  openai:gpt-4o ", cmd.SettingsSet("model", "openai:gpt-4o")),
        ("/settings set x a b", cmd.SettingsSet("x", "a b")),
        ("/settings set x", cmd.Invalid("/settings [show] | /settings set KEY VALUE")),
        ("/settings drop x", cmd.Invalid("/settings [show] | /settings set KEY VALUE")),
        ("/agent", cmd.AgentShow()),
        ("/agent plan", cmd.AgentSwitch("plan")),
        ("/help", cmd.Help()),
        ("/exit", cmd.Exit()),
        ("/quit", cmd.Exit()),
        ("/what is this", cmd.Unknown("/what")),
    ],
)
def test_parse(line: str, expected: cmd.Command | None) -> None:
    assert cmd.parse(line) == expected


def test_meter_wording_follows_the_experiment_and_threshold() -> None:
    assert meter_text(42, 70, experiment=True) == "42% · rolls over by 75%"
    assert meter_text(42, 70, experiment=False) == "42% · compacts by 75%"
    assert label(100, experiment=True) == "automatic rollover off"
    assert label(100, experiment=False) == "automatic compaction off"


def test_reported_usage_skips_the_summarizing_request_of_a_compaction() -> None:
    step = make_row("assistant", "a", id="a",
                    metadata={"usage": {"inputTokens": 100, "outputTokens": 20}})
    summary = make_row("assistant", "s", id="s", metadata={
        "compactionBoundary": True, "usage": {"inputTokens": 900, "outputTokens": 50}})
    assert reported_usage([step]) == 120
    assert reported_usage([summary]) == 0
    assert reported_usage([summary, step]) == 120
