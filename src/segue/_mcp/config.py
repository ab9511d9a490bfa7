"""The ``mcp.servers`` setting: which MCP servers give their tools to segue's agents. Pure.

::

    {"mcp": {"servers": {
        "files": {"command": "uvx", "args": ["mcp-server-filesystem", "/srv"], "env": {"K": "v"}},
        "search": {"url": "https://example.com/mcp", "timeout": 30}
    }}}

A server is a command (``command`` with optional ``args``, ``env`` and ``cwd``: started as a
subprocess speaking stdio) or a ``url`` (streamable HTTP); ``timeout`` (seconds, default
:data:`DEFAULT_TIMEOUT`) bounds one call. ``trusted: true`` is the user's word that the
server's ``readOnlyHint`` may be believed (R38); without it every tool of the server asks for
approval, whatever its annotations say, because a hint from a program is not the user's word.
Names are ``[A-Za-z0-9-]{1,40}``, because a tool
is advertised as ``mcp__<server>__<tool>`` and ``__`` must stay the separator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from segue._errors import SettingsError

DEFAULT_TIMEOUT = 120.0
NAME = re.compile(r"[A-Za-z0-9-]{1,40}")
_KEYS = {"command", "args", "env", "cwd", "url", "timeout", "trusted"}


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    #: R38: the user believes this server's readOnlyHint (default: no server is believed).
    trusted: bool = False


def parse_servers(key: str, value: Any) -> tuple[ServerSpec, ...]:
    """Every server of the setting, in the file's order; SettingsError naming what is wrong."""

    def bad(what: str) -> SettingsError:
        return SettingsError(f"{key}: {what}", key=key)

    if not isinstance(value, dict):
        raise bad("must be an object of server name -> {command, args, env} or {url}")
    specs = []
    for name, spec in value.items():
        if not NAME.fullmatch(name):
            raise bad(f"server name {name!r} must match [A-Za-z0-9-]{{1,40}}")
        if not isinstance(spec, dict):
            raise bad(f"server {name!r} must be an object")
        unknown = set(spec) - _KEYS
        if unknown:
            raise bad(f"server {name!r} has unknown keys {sorted(unknown)}")
        command, url = spec.get("command"), spec.get("url")
        if (command is None) == (url is None):
            raise bad(f"server {name!r} needs exactly one of 'command' or 'url'")
        if command is not None and (not isinstance(command, str) or not command):
            raise bad(f"server {name!r}: 'command' must be a non-empty string")
        if url is not None and (not isinstance(url, str) or not re.fullmatch(r"https?://\S+", url)):
            raise bad(f"server {name!r}: 'url' must be an http:// or https:// URL")
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise bad(f"server {name!r}: 'args' must be a list of strings")
        env = spec.get("env", {})
        if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()
        ):
            raise bad(f"server {name!r}: 'env' must be an object of strings")
        cwd = spec.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise bad(f"server {name!r}: 'cwd' must be a string")
        timeout = spec.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise bad(f"server {name!r}: 'timeout' must be a positive number of seconds")
        trusted = spec.get("trusted", False)
        if not isinstance(trusted, bool):
            raise bad(f"server {name!r}: 'trusted' must be true or false")
        specs.append(
            ServerSpec(name, command, tuple(args), dict(env), cwd, url, float(timeout), trusted)
        )
    return tuple(specs)


def tool_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"
