"""Tool policy: ordered, anchored regex rules (SPEC.md R12, R13). Pure.

A :class:`RuleSet` is an ordered list of ``{regex_match, action}`` rules. For a tool name:

* every rule's pattern is matched against the **whole** name (``re.fullmatch``), so
  ``file_.*`` never grants ``my_file_tool`` and ``bash`` never grants ``bash2``;
* the **last** matching rule decides (``enable`` allows, ``disable`` denies);
* when no rule matches, the tool is **denied**: a policy only grants what it names.

A :class:`ToolPolicy` is the agent's rule set plus any number of caller restrictions. A tool
is allowed only when *every* layer allows it, so a restriction can only narrow what the agent
may do, never widen it (R12: "a caller's restriction can only narrow").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from segue._errors import UsageError

#: The retrieval tool whose availability decides whether a rollover may seal context (R13).
SESSION_HISTORY_TOOL = "session_history"


class Action(StrEnum):
    ENABLE = "enable"
    DISABLE = "disable"


@dataclass(frozen=True)
class Rule:
    """One rule; build it with :func:`rule` so the pattern is checked once, up front."""

    regex_match: str
    action: Action
    _compiled: re.Pattern[str] = field(repr=False, compare=False)

    def matches(self, tool_name: str) -> bool:
        return self._compiled.fullmatch(tool_name) is not None


def rule(regex_match: str, action: Action | str) -> Rule:
    """A validated rule. A bad regex or action is a UsageError naming the pattern."""
    try:
        act = Action(action)
    except ValueError:
        raise UsageError(
            f"tool rule {regex_match!r}: action must be 'enable' or 'disable', not {action!r}"
        ) from None
    if not regex_match:
        raise UsageError("tool rule: the pattern must not be empty")
    try:
        compiled = re.compile(regex_match)
    except re.error as exc:
        raise UsageError(f"tool rule {regex_match!r} is not a valid regex: {exc}") from None
    return Rule(regex_match=regex_match, action=act, _compiled=compiled)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...] = ()

    def allows(self, tool_name: str) -> bool:
        for candidate in reversed(self.rules):
            if candidate.matches(tool_name):
                return candidate.action is Action.ENABLE
        return False

    def then(self, more: Iterable[Rule]) -> RuleSet:
        """These rules followed by ``more`` (which therefore win where both match)."""
        return RuleSet((*self.rules, *more))


@dataclass(frozen=True)
class ToolPolicy:
    """The agent's rules and the caller restrictions layered on top (all must allow)."""

    agent_rules: RuleSet
    restrictions: tuple[RuleSet, ...] = ()

    def narrowed(self, restriction: RuleSet | Iterable[Rule]) -> ToolPolicy:
        layer = restriction if isinstance(restriction, RuleSet) else RuleSet(tuple(restriction))
        return ToolPolicy(self.agent_rules, (*self.restrictions, layer))


def may_use(policy: ToolPolicy, tool_name: str) -> bool:
    """Whether the effective policy allows ``tool_name``."""
    if not policy.agent_rules.allows(tool_name):
        return False
    return all(layer.allows(tool_name) for layer in policy.restrictions)


def can_use_session_history(policy: ToolPolicy) -> bool:
    """Whether a rollover may seal context for this agent (R13): the agent must be able to
    look the sealed window up again. False means the rollover is blocked, not summarized."""
    return may_use(policy, SESSION_HISTORY_TOOL)


def allowed_tools(policy: ToolPolicy, tool_names: Sequence[str]) -> tuple[str, ...]:
    """The names from ``tool_names`` the policy allows, in their given order."""
    return tuple(name for name in tool_names if may_use(policy, name))


def allow_only(tool_names: Iterable[str]) -> RuleSet:
    """A restriction that allows exactly these names (matched literally, not as regexes)."""
    return RuleSet(tuple(rule(re.escape(name), Action.ENABLE) for name in tool_names))
