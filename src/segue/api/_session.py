"""``segue.open_session``: a Session for a library caller, configured by arguments.

The command line and this function build sessions the same way (model choice, the agent's
tool policy, plugins, MCP servers, approval: :func:`segue._session.factory.open_session`);
what differs is where the configuration comes from. Here the home's ``settings.json`` is
read and then the caller's ``settings=`` and keyword arguments apply on top, **for this
session only**: nothing is written to the settings file, so a library caller never changes
what the user's ``segue`` commands do.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from segue._errors import SettingsError, UsageError
from segue._events import EventSink, ignore
from segue._policy.approval import Mode, parse_mode
from segue._session.core import Session
from segue._session.factory import open_session as build_session
from segue._settings import THRESHOLD_PREFIX, Settings, load_settings, settings_path, validate
from segue._workspace import Layout
from segue.api._approval import ApproverLike, adapt
from segue.api._where import resolve_layout

PathLike = str | os.PathLike[str]
SCRIPTED = "scripted:"


def open_session(
    workspace: str | Layout | None = None,
    *,
    home: PathLike | None = None,
    workdir: PathLike | None = None,
    model: str | None = None,
    agent: str | None = None,
    settings: Mapping[str, Any] | None = None,
    experiment: bool | None = None,
    threshold: int | None = None,
    approve: Mode | str | None = None,
    approver: ApproverLike | None = None,
    on_event: EventSink | None = None,
    store: str | None = None,
    durable: bool = True,
    keep_script_position: bool = False,
) -> Session:
    """Open the conversation of one workspace: a :class:`~segue.Session` to ``send`` to.

    Where:

    * ``workspace`` — the workspace id (``[A-Za-z0-9._-]{1,64}``), or a :class:`~segue.Layout`
      (which also names the home). Default: the id ``segue`` derives from ``workdir``, the
      same as the command line's default for that directory.
    * ``home`` — where segue keeps everything. Default: ``$SEGUE_HOME``, else ``~/.segue``.
    * ``workdir`` — the directory the file and shell tools work in (and are confined to).
      Default: the current directory.

    What:

    * ``model`` — ``provider:name`` (``openai:gpt-4o``, ``anthropic:claude-sonnet-4-5``,
      ``scripted:PATH`` offline, a relative PATH from the current directory). Default: the
      agent's own model, else the ``model`` setting; without any a :class:`~segue.UsageError`.
    * ``agent`` — ``exec`` (the default), ``plan``, ``explore`` or a custom agent of
      ``workdir``'s ``.segue/agents/``.

    Settings, for this session only (the settings file is read, never written):

    * ``settings`` — any settings by key, as ``segue settings set`` takes them
      (``{"experiments.tokenBudget": True, "contextWindow.openai-compatible:llama3": 8192}``);
      ``None`` as a value unsets a key. Each value is validated: a bad key or value is a
      :class:`~segue._errors.SettingsError` naming it.
    * ``experiment`` — roll over to fresh context windows instead of compacting (R1;
      the ``experiments.tokenBudget`` setting).
    * ``threshold`` — the context threshold in percent, 0-100 in steps of 5 (R2); it wins
      over every per-model threshold for this session. 100 turns automatic handling off.

    Approval of tools that change the machine (``bash``, ``file_write``, ``file_edit``, MCP
    and plugin tools not marked read-only; SPEC.md R38):

    * ``approve`` — the mode: ``"ask"``, ``"auto-edit"``, ``"full"``, ``"deny"`` (or a
      :class:`~segue.Mode`). Default: the workspace's own mode, else the ``approval`` setting,
      else ``ask``.
    * ``approver`` — called with an :class:`~segue.ApprovalRequest` (the exact command or
      diff in ``preview``) whenever the mode asks; it returns an :class:`~segue.Answer`
      (``ALWAYS`` remembers ``request.pattern`` for the workspace) or a bool, or an
      awaitable of either. Without an approver nothing can ask, so a call that would ask is
      denied and the model reads a result saying so; a denied call is recorded as that call's
      result either way. An approver that raises or answers anything else denies the call.

    The rest:

    * ``on_event`` — called with every :class:`~segue.Event` of every turn (streamed text,
      tool calls, usage, rollovers); see also :meth:`~segue.Session.stream`.
    * ``store`` — a ``postgresql://`` URL to keep the transcript in PostgreSQL (SPEC.md §8).
      Default: the ``store.url`` setting, else the JSONL files under ``home``.
    * ``durable`` — fsync every append (the default); ``False`` trades crash safety for speed.
    * ``keep_script_position`` — a ``scripted:`` model starts from its first response in
      each session (the default); ``True`` continues where the last session on this home
      stopped, as successive ``segue run`` commands do.

    The session is a context manager: leaving the ``with`` block stops what it started (MCP
    servers) and gives back its store's connections (PostgreSQL). Nothing of the session is
    kept in memory between sends: the transcript on disk is the conversation, so another
    process (or ``segue chat``) may go on with it later.
    """
    layout, where = resolve_layout(workspace, home=home, workdir=workdir)
    if not where.is_dir():
        raise UsageError(f"workdir {where} is not a directory: the tools need one to work in")
    chosen = _settings(layout.home, settings, experiment, threshold)
    url = store if store is not None else chosen.get("store.url")
    session = build_session(
        layout,
        workdir=where,
        model=_absolute_script(model),
        agent_name=agent,
        on_event=on_event if on_event is not None else ignore,
        durable=durable,
        persist_script_position=keep_script_position,
        approval=parse_mode(str(approve)) if approve is not None else None,
        approver=adapt(approver) if approver is not None else None,
        store_url=url if isinstance(url, str) else None,
        settings=chosen,
    )
    # The workspace lock exists from the start: a session is a writer, and its first read
    # (before any append) would otherwise note on stderr that it read unlocked.
    with session.store.locked():
        pass
    return session


def _absolute_script(model: str | None) -> str | None:
    """``scripted:PATH`` with a relative path means relative to this process's directory
    (as a Python caller reads it), not to ``workdir``, where the session's tools run."""
    if model is None or not model.startswith(SCRIPTED):
        return model
    path = Path(model.removeprefix(SCRIPTED))
    return model if path.is_absolute() else SCRIPTED + str(Path.cwd() / path)


def _settings(
    home: Path,
    given: Mapping[str, Any] | None,
    experiment: bool | None,
    threshold: int | None,
) -> Settings:
    """The home's settings with the caller's on top (validated; nothing is written)."""
    current = load_settings(settings_path(home))
    for key, value in (given or {}).items():
        current = current.with_value(key, value)
    if experiment is not None:
        current = current.with_value("experiments.tokenBudget", experiment)
    if threshold is not None:
        try:
            validate("threshold.default", threshold)
        except SettingsError as exc:
            raise SettingsError(
                exc.message.replace("threshold.default", "threshold", 1), key="threshold"
            ) from None
        # The caller's threshold is the session's, whatever the model: per-model ones yield.
        values = {k: v for k, v in current.values.items() if not k.startswith(THRESHOLD_PREFIX)}
        current = Settings({**values, "threshold.default": threshold})
    return current


__all__ = ["open_session"]
