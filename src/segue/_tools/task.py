"""The ``task`` tool (SPEC.md R41): hand a bounded task to a child agent.

``{"agent": NAME, "prompt": TEXT}`` → the child's final report. The tool object carries the
name, description, schema and the input check; running the child is the engine's job
(:mod:`segue._session.tasks` builds the child session in its own workspace), given to the
tool as a :data:`Delegate`.

The call itself changes nothing on the machine (``read_only``): every call the child makes
goes through the child's own tool policy and the parent's approval gate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from segue._tools.base import tool_error

TASK_TOOL = "task"
MAX_PROMPT = 20_000

DESCRIPTION = (
    "Hand a bounded task to a sub-agent that works in its own context and returns its final "
    "report. agent: exec, plan, explore or a custom agent. Its tools are at most yours. "
    "session_history with task_id (the result's taskId) reads the sub-agent's history."
)
SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "agent": {"type": "string", "description": "the sub-agent: exec, plan, explore, …"},
        "prompt": {"type": "string", "description": "the whole task, self-contained"},
    },
    "required": ["agent", "prompt"],
    "additionalProperties": False,
}

#: Runs one checked task: (agent name, prompt) → the tool result.
Delegate = Callable[[str, str], dict[str, Any]]


def check_task(args: Mapping[str, Any]) -> tuple[str, str] | dict[str, Any]:
    """The call's agent and prompt, or the error object its input earns."""
    unknown = sorted(set(args) - {"agent", "prompt"})
    if unknown:
        return tool_error("invalid_argument", f"unknown argument(s): {', '.join(unknown)}")
    agent, prompt = args.get("agent"), args.get("prompt")
    if not isinstance(agent, str) or not agent.strip():
        return tool_error("invalid_argument", "agent must be a non-empty string")
    if not isinstance(prompt, str) or not prompt.strip():
        return tool_error("invalid_argument", "prompt must be a non-empty string")
    if len(prompt) > MAX_PROMPT:
        return tool_error("invalid_argument", f"prompt is longer than {MAX_PROMPT} characters")
    return agent.strip(), prompt


class TaskTool:
    """``task`` over a :data:`Delegate` that runs the child."""

    name = TASK_TOOL
    description = DESCRIPTION
    read_only = True  # R38: the child's own calls are approved one by one

    def __init__(self, delegate: Delegate) -> None:
        self._delegate = delegate

    @property
    def schema(self) -> Mapping[str, Any]:
        return SCHEMA

    def run(self, args: Mapping[str, Any]) -> Any:
        checked = check_task(args)
        if isinstance(checked, dict):
            return checked
        agent, prompt = checked
        return self._delegate(agent, prompt)
