"""R38's decision, pure: modes, anchored last-match-wins rules, and the suggested pattern
(the narrowest: exactly the call shown)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segue import UsageError
from segue._policy.approval import (
    Mode,
    Verdict,
    approval_rule,
    decide,
    parse_mode,
    suggested_pattern,
)

BASH = {"command": "git status"}
EDIT = {"path": "a.py", "old_string": "x", "new_string": "y"}


@pytest.mark.parametrize(
    ("mode", "tool", "args", "verdict"),
    [
        (Mode.ASK, "bash", BASH, Verdict.ASK),
        (Mode.ASK, "file_edit", EDIT, Verdict.ASK),
        (Mode.AUTO_EDIT, "file_edit", EDIT, Verdict.ALLOW),
        (Mode.AUTO_EDIT, "file_write", {"path": "n.txt", "content": ""}, Verdict.ALLOW),
        (Mode.AUTO_EDIT, "bash", BASH, Verdict.ASK),
        (Mode.FULL, "bash", BASH, Verdict.ALLOW),
        (Mode.DENY, "file_edit", EDIT, Verdict.DENY),
        (Mode.ASK, "mcp__srv__write", {"x": 1}, Verdict.ASK),
    ],
)
def test_modes(mode: Mode, tool: str, args: dict[str, object], verdict: Verdict) -> None:
    assert decide(mode, tool, args, read_only=False).verdict is verdict


def test_a_read_only_tool_never_asks_even_in_deny() -> None:
    assert decide(Mode.DENY, "file_read", {"path": "a"}, read_only=True).verdict is Verdict.ALLOW


def test_rules_are_anchored_and_the_last_match_wins() -> None:
    rules = [approval_rule("bash:git .*"), approval_rule("bash:git push.*", "deny")]
    assert decide(Mode.ASK, "bash", BASH, read_only=False, rules=rules).verdict is Verdict.ALLOW
    push = {"command": "git push origin"}
    assert decide(Mode.ASK, "bash", push, read_only=False, rules=rules).verdict is Verdict.DENY
    # Anchored: "git status" does not grant "sudo git status".
    sudo = {"command": "sudo git status"}
    assert decide(Mode.ASK, "bash", sudo, read_only=False, rules=rules).verdict is Verdict.ASK
    # A remembered deny holds in full; deny mode outranks a remembered allow.
    assert decide(Mode.FULL, "bash", push, read_only=False, rules=rules).verdict is Verdict.DENY
    assert decide(Mode.DENY, "bash", BASH, read_only=False, rules=rules).verdict is Verdict.DENY


def test_bad_input_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="approval mode must be one of"):
        parse_mode("yolo")
    with pytest.raises(UsageError, match="not a valid regex"):
        approval_rule("bash:(")
    with pytest.raises(UsageError, match="'allow' or 'deny'"):
        approval_rule("bash:.*", "enable")


@given(st.sampled_from(["git status", "npm test", "ls", "pytest -q"]),
       st.text(alphabet="abc -_./=", min_size=1, max_size=20))
def test_always_remembers_exactly_the_call_shown(base: str, more: str) -> None:
    rule = approval_rule(suggested_pattern("bash", {"command": base}))
    assert rule.matches(f"bash:{base}")
    assert not rule.matches(f"bash:{base} {more}")  # the narrowest rule: nothing beyond it


def test_the_gate_asks_only_for_tools_that_do_not_say_they_are_read_only(tmp_path: Path) -> None:
    from segue import Answer, ApprovalGate, ApprovalRequest
    from segue._policy.approval_store import ApprovalFile
    from segue._tools.base import FunctionTool, ToolRegistry

    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return Answer.ALWAYS

    def tool(name: str, **kw: bool) -> FunctionTool:
        return FunctionTool(name, "", {"type": "object"}, lambda args: {"ok": True}, **kw)

    reader, unknown = tool("lookup", read_only=True), tool("mcp__srv__deploy")
    registry = ToolRegistry([reader, unknown])
    rules = ApprovalFile(tmp_path / "approvals.json")
    gate = ApprovalGate(Mode.ASK, rules, approver)

    def run(name: str) -> object:
        return registry.run(name, {"env": "prod"}, lambda _n: True, approve=gate.check)
    assert run("lookup") == {"ok": True} and asked == []
    assert run("mcp__srv__deploy") == {"ok": True}
    assert [r.subject for r in asked] == ['mcp__srv__deploy:{"env":"prod"}']
    assert [r.pattern for r in rules.rules()] == [r'mcp__srv__deploy:\{"env":"prod"\}']
    assert run("mcp__srv__deploy") == {"ok": True} and len(asked) == 1  # remembered
    # Without an approver nobody can be asked: denied, with a result that says so.
    denied = ToolRegistry([unknown]).run(
        "mcp__srv__deploy", {}, lambda _n: True, approve=ApprovalGate(Mode.ASK).check)
    assert isinstance(denied, dict) and denied["error"]["code"] == "approval_denied"
