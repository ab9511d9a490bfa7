"""What a typed line means: a message for the model, or a slash command (pure).

A line that starts with ``/`` is a command; ``//`` escapes it, so ``//etc/hosts?`` sends
"/etc/hosts?" to the model. A blank line means nothing. A command with the wrong arguments is
an :class:`Invalid` carrying its usage line, never a message sent by accident.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Message:
    text: str


@dataclass(frozen=True)
class Clear:
    soft: bool


@dataclass(frozen=True)
class Compact:
    pass


@dataclass(frozen=True)
class SettingsShow:
    pass


@dataclass(frozen=True)
class SettingsSet:
    key: str
    value: str


@dataclass(frozen=True)
class AgentShow:
    pass


@dataclass(frozen=True)
class AgentSwitch:
    name: str


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Exit:
    pass


@dataclass(frozen=True)
class Approve:
    """``/approve``: show the approval mode and rules; ``/approve MODE``: change the mode
    for the rest of this chat."""

    mode: str | None = None


@dataclass(frozen=True)
class Unknown:
    name: str


@dataclass(frozen=True)
class Invalid:
    usage: str


Command = (
    Message
    | Clear
    | Compact
    | SettingsShow
    | SettingsSet
    | AgentShow
    | AgentSwitch
    | Approve
    | Help
    | Exit
    | Unknown
    | Invalid
)

#: (usage, what it does) — the /help text, in this order.
HELP: tuple[tuple[str, str], ...] = (
    ("/clear --soft", "start a fresh context window; everything stays on disk"),
    ("/clear", "destroy this workspace's whole transcript (asks first)"),
    ("/compact", "summarize the context window into a compaction boundary"),
    ("/settings", "show the settings"),
    ("/settings set KEY VALUE", "change a setting (e.g. experiments.tokenBudget true)"),
    ("/agent [NAME]", "show the agent, or switch to NAME (exec, plan, explore, custom)"),
    ("/approve [MODE]", "show approval mode and rules, or set ask|auto-edit|full|deny"),
    ("/help", "this list"),
    ("/exit", "leave (Ctrl-D does too; Ctrl-C stops a running turn)"),
    ("//text", "send a message that starts with /"),
)


_NAMES = frozenset({"clear", "compact", "settings", "agent", "approve", "help", "exit", "quit"})


def parse(line: str) -> Command | None:
    """The command a typed line stands for; None for a blank line."""
    text = line.rstrip("\r\n")
    stripped = text.strip()
    if not stripped:
        return None
    if stripped.startswith("//"):
        return Message(stripped[1:])
    if not stripped.startswith("/"):
        return Message(text.rstrip())
    head, _, rest = stripped.partition(" ")
    args = rest.split()
    name = head[1:].lower()
    if "\n" in stripped and name not in _NAMES:
        # A pasted block that starts with a path ("/usr/lib/x.py:3: error …") is a message.
        return Message(text.rstrip())
    if name == "approve":
        if len(args) > 1:
            return Invalid("/approve [ask|auto-edit|full|deny]")
        return Approve(args[0] if args else None)
    if name == "clear":
        if not args:
            return Clear(soft=False)
        if args == ["--soft"]:
            return Clear(soft=True)
        return Invalid("/clear [--soft]")
    if name == "compact":
        return Compact() if not args else Invalid("/compact")
    if name == "settings":
        return _settings(rest.strip())
    if name == "agent":
        if not args:
            return AgentShow()
        return AgentSwitch(args[0]) if len(args) == 1 else Invalid("/agent [NAME]")
    if name == "help":
        return Help()
    if name in ("exit", "quit"):
        return Exit()
    return Unknown(head)


def _settings(rest: str) -> Command:
    if rest in ("", "show"):
        return SettingsShow()
    verb, _, tail = rest.partition(" ")
    key, _, value = tail.strip().partition(" ")
    # The value is the rest of the line, so a text value may contain spaces.
    if verb == "set" and key and value.strip():
        return SettingsSet(key, value.strip())
    return Invalid("/settings [show] | /settings set KEY VALUE")
