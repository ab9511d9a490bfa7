"""What an agent may do with the workspace tools beyond its tool policy. Pure.

The ``plan`` agent "has read-only tools and writes only a plan file", while R12 says ``plan``
grants everything through ``.*``. Both stay literally true:

* the agent's own rules are untouched (``.*``), so ``session_history`` and every other check
  that reads the agent policy see what R12 promises;
* the session adds a **caller restriction** (R12: a restriction can only narrow) that allows
  just the reading tools, ``memory`` (notes outside the project, R14) and the two file-writing
  tools, so ``bash`` is neither advertised nor runnable;
* ``file_write`` and ``file_edit`` get a **write scope**: ``PLAN.md`` at the workspace root or
  ``.xum/plans/*.md``; any other path is refused with ``write_not_allowed``.

The profile applies to ``plan`` and every agent built on it (``plan`` anywhere in its base
chain, including a workspace ``plan.md`` shadowing the built-in): an agent based on the
planner plans. Every other agent writes anywhere inside the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

from xum.policy import Agent, RuleSet, allow_only
from xum.tools.globs import glob_matches

PLAN_AGENT = "plan"
PLAN_FILES: tuple[str, ...] = ("./PLAN.md", ".xum/plans/*.md")
PLAN_TOOLS: tuple[str, ...] = (
    "file_read",
    "file_search",
    "file_write",
    "file_edit",
    "memory",
    "session_history",
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
        shown = ", ".join(p.removeprefix("./") for p in self.patterns or ())
        return f"the {self.holder} agent may write only {shown}"


ANYWHERE = WriteScope()
PLAN_SCOPE = WriteScope(PLAN_FILES, PLAN_AGENT)


@dataclass(frozen=True)
class ToolProfile:
    restrictions: tuple[RuleSet, ...]
    write_scope: WriteScope


def tool_profile(agent: Agent) -> ToolProfile:
    if PLAN_AGENT in agent.lineage:
        return ToolProfile((allow_only(PLAN_TOOLS),), PLAN_SCOPE)
    return ToolProfile((), ANYWHERE)
