"""Claude Code sessions: ``~/.claude/projects/<project>/<session-uuid>.jsonl``. Pure.

One JSON object per line, ``type`` first of all:

* ``user`` / ``assistant``: ``message`` is an Anthropic Messages API message (``role``,
  ``content`` a string or a list of blocks: ``text``, ``tool_use`` {id, name, input},
  ``tool_result`` {tool_use_id, content (string or blocks), is_error}, ``thinking`` /
  ``redacted_thinking``, ``image``), with ``uuid``, ``sessionId``, ``timestamp``, and flags:
  ``isSidechain`` (a sub-agent's chain, not the user's conversation), ``isMeta`` (text
  Claude Code injected, such as caveats), ``isCompactSummary`` (the summary that opens the
  context after a compaction);
* ``system`` with ``subtype: "compact_boundary"`` (2.0.x): Claude Code compacted the
  conversation here; the summary follows as a user line (``isCompactSummary``);
* ``summary``, other ``system`` lines, ``file-history-snapshot``, ``queue-operation``,
  ``progress`` and any later type: bookkeeping, not conversation — skipped.

A user message that is the ``/clear`` command (``<command-name>/clear</command-name>``) is a
clear; a change of ``sessionId`` is a new session. Sidechain lines (a sub-agent's work, in the
session file in 1.0.x, in ``agent-<agentId>.jsonl`` files from 2.0) are kept apart, one chain
per ``agentId`` (or per chain root, found through ``parentUuid``), and follow the file's main
conversation, each as its own sub-agent. Reasoning blocks are left out (R25); images become
``[media omitted]``. A line of type ``user``/``assistant`` whose ``message`` does not have this
shape refuses the whole file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from segue._importers.entries import (
    MEDIA,
    Clear,
    Entry,
    Message,
    SessionStart,
    Summary,
    ToolCall,
    ToolResult,
    cap_input,
    iso_ms,
    json_lines,
    refuse,
)

FORMAT = "claude-code"
_CLEAR = "<command-name>/clear</command-name>"
_MEDIA = MEDIA
_CONTINUED = "This session is being continued from a previous conversation"
#: The compaction's own words when the file has no summary line after its boundary.
NO_SUMMARY = "[Claude Code compacted the conversation here; no summary was recorded]"


@dataclass
class _Chain:
    """One conversation of the file: the main one, or a sub-agent's."""

    agent: str | None
    source: str
    entries: list[Entry] = field(default_factory=list)
    session: str | None = None
    #: a compact_boundary waiting for its summary: (its id, its time)
    compacting: tuple[str, int | None] | None = None

    def start(self, sid: str, ts: int | None) -> None:
        if sid != self.session:
            self.session = sid
            self.entries.append(SessionStart(sid, ts, self.agent, self.source))

    def settle_compaction(self) -> None:
        if self.compacting is not None:
            ident, ts = self.compacting
            self.entries.append(Summary(ident, NO_SUMMARY, ts))
            self.compacting = None


@dataclass
class _Chains:
    source: str
    main: _Chain
    agents: dict[str, _Chain] = field(default_factory=dict)
    #: sidechain line uuid → the chain it belongs to
    member: dict[str, str] = field(default_factory=dict)

    def of(self, obj: dict[str, Any]) -> _Chain:
        name = PurePath(self.source).name
        own_file = name.startswith("agent-")  # a sub-agent's own file: every line is its
        if obj.get("isSidechain") is not True and not own_file:
            return self.main
        agent = obj.get("agentId")
        if own_file and (not isinstance(agent, str) or not agent):
            agent = name.removeprefix("agent-").removesuffix(".jsonl")
        uid, parent = obj.get("uuid"), obj.get("parentUuid")
        if not isinstance(agent, str) or not agent:
            agent = self.member.get(parent) if isinstance(parent, str) else None
            agent = agent or (uid if isinstance(uid, str) and uid else "sidechain")
        if isinstance(uid, str):
            self.member[uid] = agent
        if agent not in self.agents:
            self.agents[agent] = _Chain(agent, self.source)
        return self.agents[agent]

    def entries(self) -> list[Entry]:
        out: list[Entry] = []
        for chain in (self.main, *self.agents.values()):
            chain.settle_compaction()
            out += chain.entries
        return out


def parse(data: bytes | Iterable[bytes], source: str) -> list[Entry]:
    chains = _Chains(source, _Chain(None, source))
    for number, obj in json_lines(data, source):
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise refuse(source, number, "no string 'type' (not a Claude Code session line)")
        if kind == "system" and obj.get("subtype") == "compact_boundary":
            chain = chains.of(obj)
            chain.settle_compaction()
            uid = obj.get("uuid")
            ident = uid if isinstance(uid, str) and uid else f"line{number}"
            chain.compacting = (ident, iso_ms(obj.get("timestamp")))
            continue
        if kind not in ("user", "assistant"):
            continue
        message = obj.get("message")
        if not isinstance(message, dict):
            raise refuse(source, number, f"a {kind} line without a 'message' object")
        chain = chains.of(obj)
        sid = obj.get("sessionId")
        sid = sid if isinstance(sid, str) and sid else "session"
        ts = iso_ms(obj.get("timestamp"))
        chain.start(sid, ts)
        uid = obj.get("uuid")
        ident = uid if isinstance(uid, str) and uid else f"line{number}"
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            raise refuse(source, number, "message 'content' is neither text nor a list")
        if kind == "user":
            found = _user(obj, blocks, ident, ts, source=source, number=number,
                          summary_due=chain.compacting is not None)
            if any(isinstance(e, Summary) for e in found):
                chain.compacting = None
            elif any(isinstance(e, Message | Clear) for e in found):
                chain.settle_compaction()
            chain.entries += found
        else:
            chain.settle_compaction()
            model = message.get("model")
            label = model if isinstance(model, str) else None
            chain.entries += _assistant(blocks, ident, ts, label, source=source, number=number)
    return chains.entries()


def _user(
    obj: dict[str, Any],
    blocks: list[Any],
    ident: str,
    ts: int | None,
    *,
    source: str,
    number: int,
    summary_due: bool = False,
) -> list[Entry]:
    out: list[Entry] = []
    texts: list[str] = []
    for block in blocks:
        btype = _block_type(block, source, number)
        if btype == "text":
            texts.append(_text(block, source, number))
        elif btype == "tool_result":
            call = block.get("tool_use_id")
            if not isinstance(call, str):
                raise refuse(source, number, "a tool_result without a string 'tool_use_id'")
            failed = block.get("is_error") is True
            out.append(ToolResult(call, _result_text(block.get("content")), failed))
        elif btype in ("image", "document"):
            texts.append(_MEDIA)
    text = "\n".join(t for t in texts if t)
    if not text or obj.get("isMeta") is True:
        return out
    if _CLEAR in text:
        return [*out, Clear(ident, ts)]
    if obj.get("isCompactSummary") is True or (
        summary_due and (obj.get("isVisibleInTranscriptOnly") is True
                         or text.lstrip().startswith(_CONTINUED))
    ):
        return [*out, Summary(ident, text, ts)]
    return [*out, Message(ident, "user", text, ts)]


def _assistant(
    blocks: list[Any], ident: str, ts: int | None, model: str | None, *, source: str, number: int
) -> list[Entry]:
    out: list[Entry] = []
    texts: list[str] = []
    calls = 0
    for block in blocks:
        btype = _block_type(block, source, number)
        if btype == "text":
            texts.append(_text(block, source, number))
        elif btype in ("tool_use", "server_tool_use"):
            call, name = block.get("id"), block.get("name")
            if not isinstance(call, str) or not isinstance(name, str):
                raise refuse(source, number, "a tool_use without string 'id' and 'name'")
            # The text before the first call travels with it, as one assistant step.
            lead = "\n".join(texts) if calls == 0 else ""
            texts = [] if calls == 0 else texts
            out.append(
                ToolCall(f"{ident}:{calls}", call, name, cap_input(block.get("input")), ts,
                         model, lead)
            )
            calls += 1
        # thinking / redacted_thinking: reasoning is left out (R25)
    text = "\n".join(t for t in texts if t)
    if text:
        out.append(Message(ident if calls == 0 else f"{ident}:text", "assistant", text, ts, model))
    return out


def _block_type(block: Any, source: str, number: int) -> str:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise refuse(source, number, "a content block that is not an object with a 'type'")
    btype: str = block["type"]
    return btype


def _text(block: dict[str, Any], source: str, number: int) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise refuse(source, number, "a text block without string 'text'")
    return text


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") in ("image", "document"):
                parts.append(_MEDIA)
        return "\n".join(parts)
    return "" if content is None else str(content)
