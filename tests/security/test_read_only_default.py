"""SPEC.md R38: a tool that declares nothing about ``read_only`` is treated as changing the
machine: it asks (and is denied where nobody can be asked). This pins the default, so
flipping it anywhere (the gate, FunctionTool, the MCP client) fails here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from segue import ApprovalGate
from segue._policy.approval import Mode
from segue._tools.base import FunctionTool, ToolRegistry


class Silent:
    """A tool object that says nothing about read_only."""

    name = "deploy"
    description = "deploys"
    schema: Mapping[str, Any] = {"type": "object"}

    def __init__(self) -> None:
        self.ran = 0

    def run(self, args: Mapping[str, Any]) -> Any:
        self.ran += 1
        return {"ok": True}


def _run(tool: Any) -> Any:
    return ToolRegistry([tool]).run(tool.name, {}, lambda _n: True,
                                    approve=ApprovalGate(Mode.ASK).check)


def test_a_tool_without_read_only_asks() -> None:
    silent = Silent()
    assert _run(silent)["error"]["code"] == "approval_denied"
    assert silent.ran == 0


def test_function_tools_default_to_changing_the_machine() -> None:
    ran: list[int] = []

    def change(_args: object) -> dict[str, bool]:
        ran.append(1)
        return {"ok": True}

    tool = FunctionTool("f", "", {"type": "object"}, change)
    assert tool.read_only is False
    assert _run(tool)["error"]["code"] == "approval_denied" and ran == []


def test_only_a_literal_true_is_read_only() -> None:
    for claimed in ("yes", 1, None, "true"):
        silent = Silent()
        silent.read_only = claimed  # type: ignore[attr-defined]
        assert _run(silent)["error"]["code"] == "approval_denied", claimed
    reader = Silent()
    reader.read_only = True  # type: ignore[attr-defined]
    assert _run(reader) == {"ok": True}
