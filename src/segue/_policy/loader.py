"""Where agent definitions come from: the package's built-ins and ``<workdir>/.segue/agents``.

This is the only module of :mod:`segue._policy` that reads files. Built-ins ship as package data
(``segue/agents/*.md``); a workspace file ``<workdir>/.segue/agents/NAME.md`` shadows a built-in
of the same name (see :mod:`segue._policy.agents` for how it may still extend it). Files are read
fresh on every resolution: an edited agent file applies to the next turn.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from segue._errors import AgentDefinitionError, UsageError
from segue._policy.agents import (
    BUILTIN_AGENTS,
    Agent,
    AgentSpec,
    parse_agent,
    resolve,
    validate_agent_name,
)

AGENTS_SUBDIR = Path(".segue") / "agents"


def workspace_agents_dir(workdir: Path) -> Path:
    return workdir / AGENTS_SUBDIR


def builtin_agent_text(name: str) -> str:
    """The shipped definition of a built-in agent."""
    if name not in BUILTIN_AGENTS:
        raise UsageError(f"{name!r} is not a built-in agent")
    return resources.files("segue").joinpath("agents", f"{name}.md").read_text(encoding="utf-8")


def available_agents(workdir: Path) -> list[str]:
    """Built-in and workspace agent names, sorted, each once."""
    names = set(BUILTIN_AGENTS)
    directory = workspace_agents_dir(workdir)
    if directory.is_dir():
        names.update(p.stem for p in directory.glob("*.md") if p.is_file())
    return sorted(names)


def resolve_agent(name: str, workdir: Path) -> Agent:
    """Resolve ``name`` for a session whose working directory is ``workdir``.

    Raises UsageError (UnknownAgentError, AgentDefinitionError) for an unknown agent, a file
    that does not parse, a bad regex or a cycle in ``base``.
    """
    validate_agent_name(name)

    def lookup(agent_name: str, builtin_only: bool) -> AgentSpec | None:
        if not builtin_only:
            path = workspace_agents_dir(workdir) / f"{agent_name}.md"
            if path.is_file():
                return parse_agent(_read(path), name=agent_name, source=str(path))
        if agent_name in BUILTIN_AGENTS:
            return parse_agent(
                builtin_agent_text(agent_name),
                name=agent_name,
                source=f"built-in:{agent_name}",
                builtin=True,
            )
        return None

    return resolve(name, lookup, available_agents(workdir))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise AgentDefinitionError(str(path), "not UTF-8 text") from None
    except OSError as exc:
        raise AgentDefinitionError(str(path), f"cannot be read: {exc.strerror}") from None
