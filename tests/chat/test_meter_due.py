"""The meter never reads as if there were room left once the trigger point is passed
("60% · rolls over by 55%"): at or past it, it says the next message sets it off, in the
line chat's prompt and in the full-screen chat's status line."""

from __future__ import annotations

import re
from pathlib import Path

from segue._chat.meter import due
from tests.chat.helpers import chat


def test_past_the_trigger_the_prompt_says_the_next_message_rolls_over(tmp_path: Path) -> None:
    # The provider reports 6200 of 8000 tokens (77%): past "rolls over by 75%".
    c = chat(tmp_path, [{"text": "ok", "usage": {"inputTokens": 6100, "outputTokens": 100}}])
    c.settings(experiments={"tokenBudget": True})
    status, keyboard = c.run(["hi"], interactive=True)
    assert status == 0
    first, second = keyboard.prompts[:2]
    assert re.fullmatch(r"\[\d+% · rolls over by 75%\] › ", first)
    assert re.fullmatch(r"\[7\d% · rolls over with the next message\] › ", second)


def test_due_keeps_the_point_until_it_is_reached() -> None:
    assert due(74, "rolls over by 75%") == "74% · rolls over by 75%"
    assert due(75, "rolls over by 75%") == "75% · rolls over with the next message"
    assert due(90, "compacts by 75%") == "90% · compacts with the next message"
    assert due(99, "automatic rollover off") == "99% · automatic rollover off"


def test_the_full_screen_meter_after_a_step_says_the_same() -> None:
    from segue import StepUsage
    from segue._tui.lines import usage_meter

    past = StepUsage(6200, 8000, 77, "rolls over by 75%", None, None)
    assert usage_meter(past) == "77% · rolls over with the next message"
    room = StepUsage(4000, 8000, 50, "rolls over by 75%", None, None)
    assert usage_meter(room) == "50% · rolls over by 75%"
