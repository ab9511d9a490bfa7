"""Building a Session from what a user configured: settings, agent, model, provider, tools.

Model choice, first match wins: the explicit ``model`` argument (``-m``), the agent's own
``model`` (front matter), the ``model`` setting. None of them is a clear UsageError.

The ``plugins`` setting becomes the session's plugin registry; nothing of a plugin is
imported until its first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from segue._errors import UsageError
from segue._events import EventSink, Notice, ignore
from segue._history.inflight import refuse_if_streaming
from segue._policy import DEFAULT_AGENT, ToolPolicy, resolve_agent
from segue._policy.approval import Mode, parse_mode
from segue._policy.approval_store import ApprovalFile
from segue._providers.base import Provider
from segue._providers.registry import create_provider
from segue._session.core import Session, SessionConfig
from segue._settings import Settings, effective_threshold, load_settings, settings_path
from segue._stores import open_store
from segue._tools.builtin import builtin_tools
from segue._tools.gate import UNATTENDED, ApprovalGate, Approver
from segue._tools.profile import ANYWHERE, WriteScope, narrower, tool_profile
from segue._workspace import Layout
from segue._workspaces import record_workdir
from segue.plugins._loading import registry_from_specs


def open_session(
    layout: Layout,
    *,
    workdir: Path,
    model: str | None = None,
    agent_name: str | None = None,
    on_event: EventSink = ignore,
    durable: bool = True,
    persist_script_position: bool = True,
    approval: Mode | str | None = None,
    approver: Approver | None = None,
    store_url: str | None = None,
    unattended: str = UNATTENDED,
    settings: Settings | None = None,
    parent: Parent | None = None,
) -> Session:
    """A Session for ``layout``'s workspace built from the user's settings.

    ``approval`` is the approval mode (R38; ``ask``, ``auto-edit``, ``full``, ``deny``); when
    omitted the workspace's own mode, then the ``approval`` setting, then ``ask``. A call that
    asks goes to ``approver``; with none it is denied, and the model is told so in the words
    of ``unattended``. ``settings``: the settings to use instead of the home's file (a library
    caller's, see :func:`segue.api._session.open_session`). ``parent``: the session is a
    task's child (R41, :mod:`segue._session.tasks`): the parent's policy and write scope
    narrow its own, it shares the parent's approval gate, and the parent's provider when
    the model is the same."""
    # Before anything is read or written: a session Xum is streaming into is not ours to run
    # (a PostgreSQL store keeps no session directory Xum could be writing).
    if store_url is None:
        refuse_if_streaming(layout)
    if settings is None:
        settings = load_settings(settings_path(layout.home))
    rules = ApprovalFile.of(layout)
    if approval is not None:
        mode = parse_mode(str(approval))
    else:
        configured = settings.get("approval")
        mode = rules.mode() or (parse_mode(configured) if configured else Mode.ASK)
    agent = resolve_agent(agent_name or DEFAULT_AGENT, workdir)
    chosen = model or agent.model or settings.get("model")
    if parent is not None and not (model or agent.model):
        chosen = parent.model  # a child works with its parent's model unless its agent names one
    if not isinstance(chosen, str):
        raise UsageError(
            "no model: pass model='provider:name', or set the model setting",
            code="no_model",
            cli="no model: pass -m provider:name, or set one with `segue settings set model ...`",
        )
    if parent is not None and parent.model == chosen:
        # One model, one conversation: a script plays the child's steps in the order they
        # come, between its parent's.
        provider = parent.provider
    else:
        provider = create_provider(
            chosen,
            # A script is one conversation per workspace: its position is kept per workspace.
            state_dir=layout.script_positions if persist_script_position else None,
            cwd=workdir,
            settings=settings,
        )
    config = SessionConfig(
        experiment=settings.token_budget,
        threshold=effective_threshold(settings, chosen),
        idle_compaction_minutes=settings.idle_compaction_minutes,
    )
    # The plan agent keeps its `.*` rules (R12) and is narrowed by a caller restriction and a
    # write scope instead (segue._tools.profile).
    profile = tool_profile(agent)
    restrictions = profile.restrictions
    write_scope = profile.write_scope
    if parent is not None:  # R41: the narrower of the two policies
        restrictions = (*restrictions, parent.policy.agent_rules, *parent.policy.restrictions)
        write_scope = narrower(write_scope, parent.write_scope)
    # Only now that the agent, the model and its key are known good: a refused command
    # writes nothing.
    record_workdir(layout, workdir)
    # ``store_url``: a PostgreSQL store (SPEC.md §8) instead of the home's JSONL files.
    store = open_store(layout, store_url, durable=durable)
    tools = builtin_tools(layout, workdir, write_scope=write_scope, store=store,
                          pass_env=tuple(settings.get("shell.passEnv") or ()))
    tools.defer_percent = int(settings.get("mcp.toolSearchPercent"))
    servers = settings.get("mcp.servers")
    if servers:
        # Nothing of the mcp SDK is imported here: servers start when the tools are needed.
        from segue._mcp.client import McpTools
        from segue._mcp.config import parse_servers

        tools.add_source(
            McpTools(
                parse_servers("mcp.servers", servers),
                workdir=workdir,
                on_problem=lambda message: on_event(Notice(message)),
            )
        )
    session = Session(
        layout,
        store,
        provider,
        agent=agent,
        tools=tools,
        config=config,
        restrictions=restrictions,
        on_event=on_event,
        # Plugins load lazily: building the registry imports nothing (R31).
        plugins=registry_from_specs(settings.plugins),
        approval=(parent.approval if parent is not None
                  else ApprovalGate(mode, rules, approver, unattended=unattended)),
    )
    # R41: the task tool runs a child session built here again, from the same recipe.
    from segue._session.tasks import TaskRunner
    from segue._tools.task import TaskTool

    recipe = Recipe(chosen, workdir, settings, store_url, durable, persist_script_position,
                    write_scope)
    tools.add(TaskTool(TaskRunner(session, recipe, unattended)))
    return session


@dataclass(frozen=True)
class Recipe:
    """What a task's child session is built from, besides its agent: the parent's."""

    model: str
    workdir: Path
    settings: Settings
    store_url: str | None
    durable: bool
    persist_script_position: bool
    write_scope: WriteScope = ANYWHERE


@dataclass(frozen=True)
class Parent:
    """What a child session takes from its parent session (R41)."""

    model: str
    provider: Provider
    policy: ToolPolicy
    write_scope: WriteScope
    approval: ApprovalGate
