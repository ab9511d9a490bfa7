"""Tool policy and agents (SPEC.md R12, R13).

* :mod:`segue._policy.rules` — ordered anchored rules, last match wins, default deny; caller
  restrictions that only narrow; ``may_use`` and ``can_use_session_history``.
* :mod:`segue._policy.frontmatter` — the strict YAML-subset parser for agent files.
* :mod:`segue._policy.agents` — agent definitions and base-chain resolution (pure).
* :mod:`segue._policy.loader` — built-in and workspace agent files (the only I/O here).
"""

from segue._errors import AgentDefinitionError, UnknownAgentError
from segue._policy.agents import (
    BUILTIN_AGENTS,
    DEFAULT_AGENT,
    Agent,
    AgentSpec,
    parse_agent,
    resolve,
)
from segue._policy.loader import available_agents, resolve_agent, workspace_agents_dir
from segue._policy.rules import (
    SESSION_HISTORY_TOOL,
    Action,
    Rule,
    RuleSet,
    ToolPolicy,
    allow_only,
    allowed_tools,
    can_use_session_history,
    may_use,
    rule,
)

__all__ = [
    "BUILTIN_AGENTS",
    "DEFAULT_AGENT",
    "SESSION_HISTORY_TOOL",
    "Action",
    "Agent",
    "AgentDefinitionError",
    "AgentSpec",
    "Rule",
    "RuleSet",
    "ToolPolicy",
    "UnknownAgentError",
    "allow_only",
    "allowed_tools",
    "available_agents",
    "can_use_session_history",
    "may_use",
    "parse_agent",
    "resolve",
    "resolve_agent",
    "rule",
    "workspace_agents_dir",
]
