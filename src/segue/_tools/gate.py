"""The approval gate: where a tool call that changes the machine waits for a yes (SPEC.md R38).

The decision itself is :func:`segue._policy.approval.decide` (pure); the gate adds what needs
I/O: the workspace's remembered rules (read fresh on every call, so a rule another chat
added holds at once), the preview the user sees (the exact command, or the diff a file edit
would make), and the person behind an :data:`Approver`.

Invariants:

* A file tool call on a protected file (``.git/config``, hooks, ``.envrc``… see
  :mod:`segue._tools.protected`) is refused in every mode but ``full``, whatever the person
  or a remembered rule answers; in ``full`` it runs and its result says what was written.
* "Always" on a call no remembered rule may approve (shell syntax, ``find -exec``…) runs it
  this once and remembers nothing: the rule could never match.
* A tool is read-only only when it says so (``read_only = True`` on the tool object); a tool
  that does not say is taken to change the machine.
* A call that is not approved is not run, and its result says why, so the model reads a
  durable tool result (``approval_denied``) instead of the call silently vanishing.
* Without an approver (``segue run``, a library caller that gave none), a call that would ask
  is denied and the result says how to allow it, in the words of whoever built the gate
  (``unattended``: the command line names its flags, a library session its arguments).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from segue._policy.approval import (
    Mode,
    Verdict,
    approval_rule,
    beyond_rules,
    decide,
    subject,
    suggested_pattern,
)
from segue._policy.approval_store import ApprovalFile
from segue._tools.base import Proceed, Tool, ToolRefusal, tool_error

DENIED = "approval_denied"
#: A file tool call on a file that makes later commands run code (segue._tools.protected).
PROTECTED = "protected_path"


class Answer(StrEnum):
    YES = "yes"
    NO = "no"
    ALWAYS = "always"


@dataclass(frozen=True)
class ApprovalRequest:
    """What the person is asked about: the call, exactly, and the rule "always" would add."""

    tool: str
    input: Mapping[str, Any]
    subject: str
    #: The exact command (``bash``), the unified diff (file edits), or the input as JSON.
    preview: str
    #: The pattern "always" remembers for this workspace (R12 semantics, see policy.approval).
    pattern: str
    #: Why no rule can be remembered for this call (then "always" runs it once), or None.
    not_rememberable: str | None = None


Approver = Callable[[ApprovalRequest], Answer]

#: What a call that needs approval is told when nobody can be asked (a library session).
UNATTENDED = (
    "it needs approval and this session has nobody to ask (no approver). The user can allow "
    "it with the approval mode auto-edit or full, the approval setting, or a remembered rule"
)

#: Why a call was denied under auto-edit with nobody to ask (auto-edit never runs it).
AUTO_EDIT_UNATTENDED = (
    "the approval mode is auto-edit, which runs file edits inside the workspace but asks "
    "before anything else that changes the machine, and nobody can be asked. The user can "
    "allow it with the approval mode full or a remembered rule"
)


def is_read_only(tool: Tool) -> bool:
    return getattr(tool, "read_only", False) is True


def preview(tool: Tool, args: Mapping[str, Any]) -> str:
    if tool.name == "bash" and isinstance(args.get("command"), str):
        return str(args["command"])
    show = getattr(tool, "preview", None)
    if callable(show):
        try:
            return str(show(args))
        except ToolRefusal as exc:
            # The tool will refuse this call anyway; the person still decides, and sees why.
            return f"(no preview: {exc.message})"
    return json.dumps(dict(args), ensure_ascii=False, indent=2)


class ApprovalGate:
    """Decides each call; asks ``approver`` when the mode says ask."""

    def __init__(
        self,
        mode: Mode,
        rules: ApprovalFile | None = None,
        approver: Approver | None = None,
        *,
        unattended: str = UNATTENDED,
    ) -> None:
        """``unattended``: why a call that would ask was denied without an approver, and how
        the user can allow it (the tool result the model reads)."""
        self.mode = mode
        self.rules = rules
        self.approver = approver
        self.unattended = unattended

    def check(self, tool: Tool, args: Mapping[str, Any]) -> dict[str, Any] | Proceed | None:
        """None (or :class:`Proceed`) when the call may run; otherwise the tool result that
        says it was denied."""
        read_only = is_read_only(tool)
        remembered = self.rules.rules() if self.rules is not None and not read_only else ()
        decision = decide(self.mode, tool.name, args, read_only=read_only, rules=remembered)
        if decision.verdict is Verdict.DENY:
            return _denied(f"{tool.name} was not run: {decision.reason}")
        guarded = None if read_only else _protected(tool, args)
        if guarded is not None:
            if self.mode is Mode.FULL:
                return Proceed(f"approval mode full: wrote a protected file ({guarded})")
            return tool_error(
                PROTECTED,
                f"{tool.name} was not run: {guarded}. File tools never write it (only the "
                "approval mode full does); ask the user to make this change",
            )
        if decision.verdict is Verdict.ALLOW:
            return None
        if self.approver is None:
            # Under auto-edit the mode is on already: naming it as the way out would mislead.
            way_out = AUTO_EDIT_UNATTENDED if self.mode is Mode.AUTO_EDIT else self.unattended
            why = f" ({decision.reason})" if "does not cover" in decision.reason else ""
            return _denied(f"{tool.name} was not run: {way_out}{why}")
        request = ApprovalRequest(
            tool=tool.name,
            input=args,
            subject=subject(tool.name, args),
            preview=preview(tool, args),
            pattern=suggested_pattern(tool.name, args),
            not_rememberable=beyond_rules(tool.name, args),
        )
        answer = self.approver(request)
        if answer is Answer.ALWAYS and self.rules is not None and request.not_rememberable is None:
            self.rules.add(approval_rule(request.pattern, "allow"))
        if answer in (Answer.YES, Answer.ALWAYS):
            return None
        return _denied(
            f"the user declined this {tool.name} call; it was not run. Do not retry it "
            "unchanged: ask the user or take another way"
        )


def _protected(tool: Tool, args: Mapping[str, Any]) -> str | None:
    check = getattr(tool, "protected", None)
    if not callable(check):
        return None
    reason = check(args)
    return reason if isinstance(reason, str) else None


def _denied(message: str) -> dict[str, Any]:
    return tool_error(DENIED, message)


#: The gate of a session built without one: everything runs (the caller chose the tools).
ALLOW_ALL = ApprovalGate(Mode.FULL)
