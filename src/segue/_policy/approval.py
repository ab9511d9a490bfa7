"""Approval before acting (SPEC.md R38). Pure: what a tool call needs before it may run.

A call is described by its *subject*, one string that names the tool and what it acts on:
``bash:<the exact command>``, ``file_write:<path>``, ``file_edit:<path>``, and for any other
tool ``<name>:<its input as compact JSON>``. Remembered approvals are ordered rules over
subjects with R12's semantics: each pattern is anchored (``re.fullmatch``) and the **last**
matching rule decides; no match leaves the decision to the mode.

Modes:

* ``ask`` — every call that changes the machine asks (the default of ``segue chat``);
* ``auto-edit`` — ``file_write`` / ``file_edit`` run (the tools refuse any path outside the
  workspace), everything else that changes the machine asks;
* ``full`` — everything runs; the user opts in by name;
* ``deny`` — nothing that changes the machine runs, whatever the remembered rules say.

A remembered ``deny`` rule holds in every mode, ``full`` included: it is something the user
said about one pattern, so it outranks a blanket mode. A read-only tool never asks.

A remembered ``allow`` rule covers what the user saw and nothing the command can do beyond it.
For ``bash`` that means a rule never approves a command with shell syntax (read by a real
parser, :mod:`segue._policy.shell_words`) nor one the table of
:mod:`segue._policy.command_risk` flags (``find -exec``, ``sed`` ``e``/``w``, ``git -c``,
``--output``…), whatever its pattern says: such a call is decided by the mode alone (it asks
in ``ask`` and ``auto-edit``), while a matching ``deny`` rule still denies it. "Always"
remembers the narrowest rule that covers the call shown: exactly that call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from segue._errors import UsageError
from segue._policy.command_risk import hazard
from segue._policy.shell_words import simple_command

#: Tools that edit files inside the workspace (``auto-edit`` lets them run).
EDIT_TOOLS = frozenset({"file_write", "file_edit"})


class Mode(StrEnum):
    ASK = "ask"
    AUTO_EDIT = "auto-edit"
    FULL = "full"
    DENY = "deny"


MODES = tuple(m.value for m in Mode)
#: The name ``segue`` exports the modes under (``segue.ApprovalMode.AUTO_EDIT``).
ApprovalMode = Mode


def parse_mode(text: str) -> Mode:
    """The mode named ``text``; a UsageError listing the modes otherwise."""
    try:
        return Mode(text)
    except ValueError:
        raise UsageError(
            f"approval mode must be one of {', '.join(MODES)}, not {text!r}"
        ) from None


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalRule:
    """One remembered rule; build it with :func:`approval_rule` (the pattern is checked)."""

    pattern: str
    action: Verdict
    _compiled: re.Pattern[str] = field(repr=False, compare=False)

    def matches(self, subject: str) -> bool:
        return self._compiled.fullmatch(subject) is not None

    def to_obj(self) -> dict[str, str]:
        return {"regex_match": self.pattern, "action": self.action.value}


def approval_rule(pattern: str, action: str = "allow") -> ApprovalRule:
    """A validated rule: ``action`` is ``allow`` or ``deny``; the pattern a valid regex."""
    if action not in (Verdict.ALLOW, Verdict.DENY):
        raise UsageError(f"approval rule {pattern!r}: action must be 'allow' or 'deny'")
    if not pattern:
        raise UsageError("approval rule: the pattern must not be empty")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"approval rule {pattern!r} is not a valid regex: {exc}") from None
    return ApprovalRule(pattern, Verdict(action), compiled)


def rules_from_obj(obj: Any) -> tuple[ApprovalRule, ...]:
    """Rules from their JSON list (``[{"regex_match", "action"}]``); UsageError if malformed."""
    if not isinstance(obj, list):
        raise UsageError("approval rules must be a list of {regex_match, action} objects")
    out: list[ApprovalRule] = []
    for item in obj:
        if (
            not isinstance(item, Mapping)
            or not isinstance(item.get("regex_match"), str)
            or not isinstance(item.get("action", "allow"), str)
        ):
            raise UsageError(f"approval rule {item!r} is not a {{regex_match, action}} object")
        out.append(approval_rule(item["regex_match"], item.get("action", "allow")))
    return tuple(out)


def last_match(rules: Iterable[ApprovalRule], subject: str) -> ApprovalRule | None:
    """The rule that decides ``subject`` (the last that matches), or None."""
    found = None
    for candidate in rules:
        if candidate.matches(subject):
            found = candidate
    return found


def subject(tool_name: str, args: Mapping[str, Any]) -> str:
    """The string rules are matched against (see the module docstring)."""
    if tool_name == "bash" and isinstance(args.get("command"), str):
        return f"bash:{args['command']}"
    if tool_name in EDIT_TOOLS and isinstance(args.get("path"), str):
        return f"{tool_name}:{args['path']}"
    text = json.dumps(dict(args), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return f"{tool_name}:{text}"


def bash_hazard(command: str) -> str | None:
    """Why a remembered rule may not approve ``command`` (shell syntax, or an argument of the
    table that runs another program or writes elsewhere), or None when one may."""
    words = simple_command(command)
    if words.argv is None:
        return f"it uses shell syntax: {words.why}"
    return hazard(words.argv)


def beyond_rules(tool_name: str, args: Mapping[str, Any]) -> str | None:
    """Why no remembered ``allow`` rule may approve this call, or None (see the docstring)."""
    if tool_name == "bash":
        command = args.get("command")
        return bash_hazard(command) if isinstance(command, str) else "it has no command text"
    return None


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str


def decide(
    mode: Mode,
    tool_name: str,
    args: Mapping[str, Any],
    *,
    read_only: bool,
    rules: Iterable[ApprovalRule] = (),
) -> Decision:
    """Whether a call runs, asks, or is denied (R38)."""
    if read_only:
        return Decision(Verdict.ALLOW, "read-only tool")
    if mode is Mode.DENY:
        return Decision(
            Verdict.DENY, "the approval mode is deny: nothing that changes the machine runs"
        )
    rules = tuple(rules)
    said = subject(tool_name, args)
    matched = last_match(rules, said)
    beyond = beyond_rules(tool_name, args) if matched is not None else None
    if matched is not None and beyond is None:
        return Decision(matched.action, f"remembered rule {matched.pattern!r}")
    if matched is not None:
        # An allow rule cannot speak for this call; a deny rule the user wrote still can.
        denied = last_match((r for r in rules if r.action is Verdict.DENY), said)
        if denied is not None:
            return Decision(Verdict.DENY, f"remembered rule {denied.pattern!r}")
    if mode is Mode.FULL:
        return Decision(Verdict.ALLOW, "approval mode full")
    if mode is Mode.AUTO_EDIT and tool_name in EDIT_TOOLS:
        return Decision(Verdict.ALLOW, "approval mode auto-edit allows file edits")
    if beyond is not None:
        return Decision(
            Verdict.ASK,
            f"remembered rule {matched.pattern!r} does not cover this call: {beyond}"
            if matched is not None else f"approval mode {mode.value}",
        )
    return Decision(Verdict.ASK, f"approval mode {mode.value}")


def suggested_pattern(tool_name: str, args: Mapping[str, Any]) -> str:
    """The rule "always" remembers: the narrowest one that covers the call shown, which is
    that exact call (its subject, escaped). A broader rule is the user's to write."""
    return _escape(subject(tool_name, args))


def _escape(text: str) -> str:
    # re.escape also escapes spaces; a pattern the user reads is clearer without that.
    return re.escape(text).replace("\\ ", " ")
