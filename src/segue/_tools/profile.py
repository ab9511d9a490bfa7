"""What an agent may do with the workspace tools beyond its tool policy. Pure.

The ``plan`` agent "has read-only tools and writes only a plan file", while R12 says ``plan``
grants everything through ``.*``. Both stay literally true:

* the agent's own rules are untouched (``.*``), so ``session_history`` and every other check
  that reads the agent policy see what R12 promises;
* the session adds a **caller restriction** (R12: a restriction can only narrow) that allows
  just the reading tools, ``memory`` (notes outside the project, R14), ``new_context`` (R37:
  it changes only the windowing) and the two file-writing tools, so ``bash`` is neither
  advertised nor runnable;
* ``file_write`` and ``file_edit`` get a **write scope**: ``PLAN.md`` at the workspace root or
  ``.segue/plans/*.md``; any other path is refused with ``write_not_allowed``.

``explore`` ("read-only, base exec") is narrowed the same way, to the reading tools,
``memory`` and ``new_context``, with no write scope at all, so its R12 lineage (it inherits
``exec``) stays true.

A profile applies to its agent and every agent built on it (the name anywhere in the base
chain, including a workspace file shadowing the built-in): an agent based on the planner
plans. When both names are in a chain, the nearer one wins. Every other agent writes
anywhere inside the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

from segue._policy import Agent, RuleSet, allow_only
from segue._tools.globs import glob_matches

PLAN_AGENT = "plan"
PLAN_FILES: tuple[str, ...] = ("./PLAN.md", ".segue/plans/*.md")
PLAN_TOOLS: tuple[str, ...] = (
    "file_read",
    "file_search",
    "file_write",
    "file_edit",
    "memory",
    "session_history",
    "new_context",
)


EXPLORE_AGENT = "explore"
EXPLORE_TOOLS: tuple[str, ...] = (
    "file_read",
    "file_search",
    "memory",
    "session_history",
    "new_context",
)


@dataclass(frozen=True)
class WriteScope:
    """Where file_write / file_edit may write: anywhere (``patterns is None``) or only the
    workspace-relative paths matching one of ``patterns``."""

    patterns: tuple[str, ...] | None = None
    holder: str = ""

    def allows(self, rel_path: str) -> bool:
        if self.patterns is None:
            return True
        return any(glob_matches(p, rel_path) for p in self.patterns)

    def describe(self) -> str:
        if not self.patterns:
            return f"the {self.holder} agent may not write files"
        shown = ", ".join(p.removeprefix("./") for p in self.patterns)
        return f"the {self.holder} agent may write only {shown}"


ANYWHERE = WriteScope()
PLAN_SCOPE = WriteScope(PLAN_FILES, PLAN_AGENT)
NO_WRITES = WriteScope((), EXPLORE_AGENT)


@dataclass(frozen=True)
class ToolProfile:
    restrictions: tuple[RuleSet, ...]
    write_scope: WriteScope


def tool_profile(agent: Agent) -> ToolProfile:
    for name in agent.lineage:  # nearest first
        if name == PLAN_AGENT:
            return ToolProfile((allow_only(PLAN_TOOLS),), PLAN_SCOPE)
        if name == EXPLORE_AGENT:
            return ToolProfile((allow_only(EXPLORE_TOOLS),), NO_WRITES)
    return ToolProfile((), ANYWHERE)


def narrower(mine: WriteScope, theirs: WriteScope) -> WriteScope:
    """The scope that allows only what both allow, for the scopes profiles give (R41: a
    task's child writes where its parent may): anywhere yields to a pattern list, and two
    different pattern lists leave nothing."""
    if mine.patterns is None:
        return theirs
    if theirs.patterns is None or theirs.patterns == mine.patterns:
        return mine
    return WriteScope((), mine.holder)
