"""The chat loop with scripted input: messages, slash commands, end of input, Ctrl-C."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from segue import Event, Session, ToolFinished, UsageError
from segue._chat import QuitNow
from tests.chat.helpers import CTRL_C, chat, meters, texts

T = TypeVar("T")

MEMORY_LIST = {"name": "memory", "input": {"action": "list"}}


def test_a_message_streams_its_reply_and_end_of_input_leaves(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "Hello! " * 20}])
    status, keyboard = c.run(["hello there"])
    assert status == 0
    assert ("Hello! " * 20).strip() in c.text
    assert texts(c.rows()) == ["hello there", "Hello! " * 20]
    # Not a terminal: no prompt, and the meter follows each turn as a machine message.
    assert keyboard.prompts == ["", ""]
    assert re.search(r"^\[segue\] \d+% · compacts by 75%$", c.text, re.M)


def test_the_prompt_carries_the_context_meter(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "word " * 400}], context_window=4000)
    c.settings(experiments={"tokenBudget": True})
    status, keyboard = c.run(["hi"], interactive=True)
    assert status == 0
    first, second, *_ = keyboard.prompts
    assert re.fullmatch(r"\[\d+% · rolls over by 75%\] › ", first)
    before, after = (int(m.split("%")[0]) for m in meters(first + second))
    assert after > before  # the reply now fills the window
    assert c.text.endswith("\n")  # Ctrl-D at a terminal leaves on a fresh line


def test_blank_lines_unknown_and_malformed_commands_send_nothing(tmp_path: Path) -> None:
    c = chat(tmp_path, [])  # any provider call would exhaust the script
    status, _ = c.run(["", "   ", "/frobnicate", "/clear --hard", "/agent a b", "/compact now",
                       "/settings set onlykey"])
    assert status == 0
    assert c.rows() == []
    assert "[segue] unknown command /frobnicate; /help lists the commands" in c.text
    assert "[segue] usage: /clear [--soft]" in c.text
    assert "[segue] usage: /agent [NAME]" in c.text
    assert "[segue] usage: /compact" in c.text
    assert "[segue] usage: /settings [show] | /settings set KEY VALUE" in c.text


def test_a_double_slash_sends_a_message_starting_with_a_slash(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "a path"}])
    c.run(["//etc/hosts?"])
    assert texts(c.rows())[0] == "/etc/hosts?"


def test_help_lists_every_command(tmp_path: Path) -> None:
    c = chat(tmp_path, [])
    c.run(["/help"])
    for name in ("/clear --soft", "/clear", "/compact", "/settings set KEY VALUE", "/agent",
                 "/help", "/exit"):
        assert f"[segue] {name} " in c.text


def test_exit_leaves_without_reading_further(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "one"}])
    status, keyboard = c.run(["/exit", "never sent"])
    assert status == 0
    assert c.rows() == []
    assert len(keyboard.prompts) == 1


def test_soft_clear_appends_a_reset_and_the_meter_drops(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "long " * 500}], context_window=4000)
    c.settings(experiments={"tokenBudget": True})
    status, keyboard = c.run(["hi", "/clear --soft", "/clear --soft"], interactive=True)
    assert status == 0
    rows = c.rows()
    assert rows[-1].metadata.get("contextBoundaryKind") == "reset"
    assert sum(1 for r in rows if r.metadata.get("contextBoundaryKind")) == 1
    assert "Context cleared" in c.text
    assert "[segue] nothing to clear: the context window is already empty" in c.text
    percents = [int(m.split("%")[0]) for m in meters("".join(keyboard.prompts))]
    assert percents[2] < percents[1]  # after the reset only system text and tools count


def test_hard_clear_asks_and_no_keeps_everything(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "kept"}])
    c.run(["hi", "/clear", "n", "/clear", ""])
    assert texts(c.rows()) == ["hi", "kept"]
    assert c.text.count("[segue] not cleared") == 2
    assert "cannot be undone" in c.text


def test_hard_clear_at_end_of_input_is_a_no(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "kept"}])
    status, _ = c.run(["hi", "/clear"])
    assert status == 0
    assert texts(c.rows()) == ["hi", "kept"]


def test_hard_clear_confirmed_destroys_the_transcript(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "first"}, {"text": "second"}])
    c.run(["hi", "/clear", "YES", "again"])
    # The conversation the script played is gone, so the script starts over too.
    assert texts(c.rows()) == ["again", "first"]
    assert "[segue] transcript destroyed" in c.text


def test_agent_switch_keeps_the_store_and_the_provider(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "from exec"}, {"text": "from plan"}])
    source = c.source()
    status, _ = c.run(
        ["/agent", "first", "/agent plan", "/agent", "second", "/agent nosuch", "/agent ../x"],
        source=source,
    )
    assert status == 0
    assert "[segue] agent exec (available: exec, explore, plan)" in c.text
    assert "[segue] agent plan (available: exec, explore, plan)" in c.text
    assert "unknown agent 'nosuch'" in c.text
    assert "invalid agent name" in c.text
    exec_session, plan_session = source.opened  # failed switches built nothing
    assert plan_session.store is exec_session.store
    assert plan_session.provider is exec_session.provider
    assert plan_session.agent.name == "plan"
    rows = c.rows()
    assert texts(rows) == ["first", "from exec", "second", "from plan"]
    assert [r.metadata.get("agentId") for r in rows if r.role == "assistant"] == ["exec", "plan"]


def test_a_custom_agent_is_found_in_the_working_directory(tmp_path: Path) -> None:
    c = chat(tmp_path, [])
    agents = tmp_path / "work" / ".segue" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\nbase: explore\n---\nReview carefully.\n")
    c.run(["/agent reviewer", "/agent"])
    assert "[segue] agent reviewer (available: exec, explore, plan, reviewer)" in c.text


def test_settings_show_and_set_rebuild_the_session(tmp_path: Path) -> None:
    c = chat(tmp_path, [])
    source = c.source()
    c.run(
        ["/settings", "/settings set experiments.tokenBudget true", "/settings set nope 1",
         "/settings set threshold.default 72", "/settings show"],
        source=source,
    )
    saved = json.loads((c.layout.home / "settings.json").read_text())
    assert saved == {"experiments": {"tokenBudget": True}}
    assert "[segue]   experiments.tokenBudget = false  (default)" in c.text
    assert "[segue] experiments.tokenBudget = true" in c.text
    assert "[segue]   experiments.tokenBudget = true\n" in c.text
    assert "[segue] error:" in c.text  # the unknown key, then the bad threshold
    assert c.text.count("[segue] error:") == 2
    first, second = source.opened
    assert (first.config.experiment, second.config.experiment) == (False, True)
    assert second.store is first.store
    sessions = re.findall(r"\[segue\] this session: .*", c.text)
    assert sessions[0].endswith("compacts by 75%")
    assert sessions[1].endswith("rolls over by 75%")


def test_compact_summarizes_and_reports_the_new_window(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "answer"}, {"text": "the summary"}])
    c.run(["/compact", "question", "/compact"])
    assert "[segue] error: nothing to compact: the context window is empty" in c.text
    rows = c.rows()
    assert rows[-1].flag("compactionBoundary")
    assert "the summary" in rows[-1].text
    assert re.search(r"\[segue\] compacted: the conversation continues in w:\d+", c.text)
    assert "Context compacted (manual)" in c.text


def test_a_provider_failure_is_reported_and_the_chat_goes_on(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "only one"}])
    status, keyboard = c.run(["one", "two", "/help"])
    assert status == 0
    assert "has no response for step 2" in c.text
    assert "[segue] /help " in c.text  # the loop kept reading
    assert len(keyboard.prompts) == 4


def test_two_ctrl_c_in_a_row_at_the_prompt_leave_with_130(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "reply"}])
    status, keyboard = c.run([CTRL_C, "hi", CTRL_C, CTRL_C, "never sent"], interactive=True)
    assert status == 130  # a program stopped by SIGINT
    assert c.text.count("Ctrl-C again or Ctrl-D to leave") == 2
    assert texts(c.rows()) == ["hi", "reply"]
    assert len(keyboard.prompts) == 4


def _cancel_on_first_tool(event: Event, session: Session) -> None:
    """Stands in for Ctrl-C arriving while a tool runs."""
    if isinstance(event, ToolFinished):
        session.cancellation.cancel()


def test_an_interrupted_turn_keeps_its_settled_step_and_the_prompt_returns(
    tmp_path: Path,
) -> None:
    c = chat(tmp_path, [{"text": "", "toolCalls": [MEMORY_LIST]},
                        {"text": "", "toolCalls": [MEMORY_LIST]},
                        {"text": "finished"}])
    source = c.source(hook=_cancel_on_first_tool)
    # One more Ctrl-C at the prompt after an interrupted turn leaves.
    status, keyboard = c.run(["go", CTRL_C, "never sent"], interactive=True, source=source)
    assert status == 130
    assert "[segue] cancelled after a settled tool step" in c.text
    assert "[segue] turn interrupted; the steps that settled are kept" in c.text
    rows = c.rows()
    assert [r.role for r in rows] == ["user", "assistant"]
    tool_parts = [p for p in rows[1].parts if p.type == "dynamic-tool"]
    assert len(tool_parts) == 1
    assert tool_parts[0].state == "output-available"
    assert "finished" not in c.text
    assert len(keyboard.prompts) == 2


def test_a_quit_while_a_turn_stops_leaves_with_130(tmp_path: Path) -> None:
    def impatient(
        work: Callable[[], T], on_interrupt: Callable[[], str | None],
        notify: Callable[[str], None],
    ) -> T:
        on_interrupt()
        notify("interrupting")
        raise QuitNow

    c = chat(tmp_path, [{"text": "unused"}])
    status, _ = c.run(["go", "never"], guard=impatient)
    assert status == 130
    assert "[segue] quitting; every settled step is on disk" in c.text


def test_an_unknown_starting_agent_is_a_usage_error(tmp_path: Path) -> None:
    c = chat(tmp_path, [])
    with pytest.raises(UsageError, match="unknown agent 'nosuch'"):
        c.run([], agent_name="nosuch")


def test_approximate_counting_changes_only_the_meter(tmp_path: Path) -> None:
    """approximateCounting is for display: the meter uses characters / 4 (here far above the
    real count of a repetitive reply), while the engine keeps counting exactly."""
    reply = "-" * 12000  # 12,000 characters, about 200 real tokens
    (tmp_path / "exact").mkdir()
    (tmp_path / "approx").mkdir()
    exact = chat(tmp_path / "exact", [{"text": reply}], context_window=20000)
    exact.run(["hi"])
    approx = chat(tmp_path / "approx", [{"text": reply}], context_window=20000)
    approx.settings(approximateCounting=True)
    approx.run(["hi"])
    exact_after = int(meters(exact.text)[-1].split("%")[0])
    approx_after = int(meters(approx.text)[-1].split("%")[0])
    assert approx_after > exact_after + 5
    assert exact.rows()[-1].metadata["usage"] == approx.rows()[-1].metadata["usage"]
