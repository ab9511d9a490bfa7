"""What the transcript view shows, as plain values: history, events, the loop's output."""

from __future__ import annotations

from segue import (
    AssistantText,
    Compacted,
    Notice,
    Part,
    RolledOver,
    StepUsage,
    ToolFinished,
    ToolStarted,
    Warned,
    make_row,
)
from segue._render.lines import Line, event_lines
from segue._tui.lines import (
    history_lines,
    output_line,
    prompt_meter,
    usage_meter,
)


def test_events_become_entries_styled_apart_from_the_conversation() -> None:
    assert event_lines(AssistantText("hi")) == []
    assert event_lines(StepUsage(10, 100, 10, "Rolls over by 75%")) == []
    assert event_lines(ToolStarted("c1", "memory", {"action": "list"})) == [
        Line("tool", '  ⚙ memory {"action": "list"}')
    ]
    assert event_lines(ToolFinished("c1", "memory", "x" * 300))[0].text.endswith("…")
    divider, said = event_lines(RolledOver("on-send", "w:0", "w:7", 1234))
    assert divider == Line("divider", "Context window rollover")
    assert said.kind == "segue"
    assert said.text.startswith("[segue] w:0 → w:7 (on-send, 1234 tokens sealed")
    assert event_lines(Warned(65, "write notes")) == [
        Line("segue", "[segue] context at 65%: notes offered")
    ]
    assert event_lines(Compacted("manual", "w:m:x")) == [
        Line("divider", "Context compacted (manual)")
    ]
    assert event_lines(Notice("paused")) == [Line("segue", "[segue] paused")]
    assert usage_meter(StepUsage(42, 100, 42, "Rolls over by 75%")) == "42% · rolls over by 75%"


def test_the_prompt_carries_the_meter_and_anything_else_is_a_question() -> None:
    assert prompt_meter("[42% · rolls over by 75%] › ") == "42% · rolls over by 75%"
    assert prompt_meter("Destroy it? [y/N] ") is None


def test_the_loops_output_is_machine_text_or_a_divider() -> None:
    assert output_line("\n") is None
    assert output_line("[segue] not cleared\n") == Line("segue", "[segue] not cleared")
    assert output_line("──── Context cleared ────") == Line("divider", "Context cleared")


def test_history_uses_the_people_view_and_is_bounded() -> None:
    rows = [make_row("user", f"question {i}", id=f"u{i}") for i in range(5)]
    tool = make_row(
        "assistant",
        id="t1",
        parts=[Part(type="dynamic-tool", toolName="memory", input={"action": "list"},
                    state="output-available", output={"ok": True})],
    )
    shown = history_lines([*rows, tool])
    assert shown[:5] == [Line("user", f"question {i}") for i in range(5)]
    assert shown[5:] == [
        Line("tool", '  ⚙ memory {"action": "list"}'),
        Line("tool", '    → {"ok": true}'),
    ]
    bounded = history_lines(rows, limit=2)
    assert bounded[0] == Line(
        "segue", "[segue] 3 earlier entries not shown (segue history export has them all)"
    )
    assert bounded[1:] == [Line("user", "question 3"), Line("user", "question 4")]


def test_a_command_in_history_reads_as_its_output_not_json() -> None:
    row = make_row(
        "assistant",
        id="t2",
        parts=[Part(type="dynamic-tool", toolName="bash", input={"command": "ls"},
                    state="output-available",
                    output={"ok": True, "exitCode": 0, "output": "a.txt\nb.txt\n",
                            "durationMs": 40})],
    )
    assert history_lines([row]) == [
        Line("tool", "  ⚙ bash $ ls"),
        Line("tool", "    → exit 0 · 0.0s\n      a.txt\n      b.txt"),
    ]
