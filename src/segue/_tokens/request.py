"""Counting whole provider requests: system text, rows, advertised tool schemas.

The counter works over :class:`segue._messages.Row` / :class:`Part` values and keeps two
numbers apart: *text tokens*, counted with the real encoding and later scaled by the model
family's factor, and *fixed tokens* (framing, media, JSON slack) that are provider-level
allowances and are not scaled.

Invariants:

* R19: only genuine media get media allowances — a ``file`` part whose ``mediaType`` is
  not textual, and the items of a supported tool-output wrapper (``{"type": "content",
  "value": [...]}`` with ``media`` / ``image-data`` / ``file-data`` / ``image-url`` /
  ``file-url`` items). A data URL or an image-shaped dict anywhere else (text, tool input,
  any other JSON) is counted as the text it is.
* R20: only the tool schemas passed in are counted; the caller passes the advertised ones.
* Incremental: a row's counts are memoized per encoding, by object identity first and by
  content digest second, so re-counting a request after appending one row encodes only
  that row. Memo entries are bounded (LRU) and are only stored for complete counts.
* A count stopped by a ceiling is marked incomplete and is never memoized.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from segue._messages import Part, Row
from segue._tokens import allowances as allow
from segue._tokens.counting import count_text

#: Part types that never reach a provider (AI SDK step markers).
_INVISIBLE_PARTS = frozenset({"step-start"})
#: File media types providers take as text; the adapters send them so (segue._providers.wire).
TEXTUAL_MEDIA = ("text/", "application/json", "application/xml", "application/x-yaml")
_WRAPPER_MEDIA_ITEMS = frozenset({"media", "image-data", "file-data", "image-url", "file-url"})

_ROW_MEMO_LIMIT = 65536
_STRING_MEMO_LIMIT = 4096
_TOOLS_MEMO_LIMIT = 16


@dataclass(frozen=True)
class Tally:
    """Text tokens (to be scaled) and fixed allowance tokens, and whether a ceiling cut the
    count short."""

    text: int = 0
    fixed: int = 0
    complete: bool = True

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.text + other.text, self.fixed + other.fixed, self.complete and other.complete
        )


class _Stop(Exception):
    """Internal: a ceiling was passed inside a row; carries the partial tally."""

    def __init__(self, tally: Tally) -> None:
        super().__init__("ceiling passed")
        self.tally = tally


def json_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON, as most providers send it (lone surrogates escaped)."""
    try:
        return msgspec.json.encode(value)
    except (msgspec.EncodeError, UnicodeEncodeError, TypeError):
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str).encode()


class RequestCounter:
    """Counts requests with one ``tiktoken.Encoding``, memoizing per row and per string.

    Not thread-safe: hold one per thread (or per session), or guard it.
    """

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self._by_identity: OrderedDict[int, tuple[Row, Tally]] = OrderedDict()
        self._by_content: OrderedDict[bytes, Tally] = OrderedDict()
        self._strings: OrderedDict[str, int] = OrderedDict()
        self._tools: OrderedDict[bytes, Tally] = OrderedDict()

    # -- whole requests ----------------------------------------------------------------------

    def request(
        self,
        system: str,
        rows: Sequence[Row],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        ceiling: int | None = None,
        scale: Any = None,
    ) -> Tally:
        """The tally of a request. With ``ceiling`` (compared against ``scale(text) +
        fixed`` when ``scale`` is given, else ``text + fixed``), stop once it is passed."""

        def total(t: Tally) -> int:
            return (scale(t.text) if scale is not None else t.text) + t.fixed

        tally = Tally(fixed=allow.REQUEST_FRAMING)
        if system:
            tally += Tally(self.string(system), allow.MESSAGE_FRAMING)
        if tools:
            tally += self.tools(tools)
        if ceiling is not None and total(tally) > ceiling:
            return Tally(tally.text, tally.fixed, complete=False)
        for row in rows:
            remaining = None
            if ceiling is not None:
                remaining = max(0, ceiling - total(tally))
            row_tally = self.row(row, ceiling=remaining)
            tally += row_tally
            if not tally.complete or (ceiling is not None and total(tally) > ceiling):
                return Tally(tally.text, tally.fixed, complete=False)
        return tally

    def tools(self, tools: Sequence[Mapping[str, Any]]) -> Tally:
        """The advertised schemas' tally, memoized by their serialized bytes: the same tool
        set is counted for every request of a session, and encoding it is cheap next to
        tokenizing it."""
        key = json_bytes(list(tools))
        found = self._tools.get(key)
        if found is not None:
            self._tools.move_to_end(key)
            return found
        tally = Tally(fixed=allow.TOOLS_PREAMBLE)
        for tool in tools:
            tally += self.json_value(tool) + Tally(fixed=allow.TOOL_SCHEMA_FRAMING)
        _remember(self._tools, key, tally, _TOOLS_MEMO_LIMIT)
        return tally

    # -- rows --------------------------------------------------------------------------------

    def row(self, row: Row, *, ceiling: int | None = None) -> Tally:
        """One row's tally, memoized. ``ceiling`` is in text tokens (a row whose text alone
        passes it comes back incomplete and is not memoized)."""
        found = self._by_identity.get(id(row))
        if found is not None and found[0] is row:
            self._by_identity.move_to_end(id(row))
            return found[1]
        key = self._content_key(row)
        tally = self._by_content.get(key) if key is not None else None
        if tally is not None:
            assert key is not None
            self._by_content.move_to_end(key)
        else:
            try:
                tally = self._count_row(row, ceiling)
            except _Stop as stop:
                return stop.tally
            if key is not None:
                _remember(self._by_content, key, tally, _ROW_MEMO_LIMIT)
        _remember(self._by_identity, id(row), (row, tally), _ROW_MEMO_LIMIT)
        return tally

    @staticmethod
    def _content_key(row: Row) -> bytes | None:
        try:
            encoded = msgspec.json.encode((row.role, row.parts))
        except (msgspec.EncodeError, UnicodeEncodeError, TypeError):
            return None  # unencodable content (a lone surrogate): count without memo
        return hashlib.blake2b(encoded, digest_size=20).digest()

    def _count_row(self, row: Row, ceiling: int | None) -> Tally:
        tally = Tally(self.string(row.role), allow.MESSAGE_FRAMING)
        for part in row.parts:
            remaining = None if ceiling is None else max(0, ceiling - tally.text)
            tally += self.part(part, ceiling=remaining)
            if not tally.complete or (ceiling is not None and tally.text > ceiling):
                raise _Stop(Tally(tally.text, tally.fixed, complete=False))
        return tally

    def part(self, part: Part, *, ceiling: int | None = None) -> Tally:
        kind = part.type
        if kind in ("text", "reasoning"):
            return self.text(part.text or "", ceiling=ceiling)
        if kind == "file":
            return self._file(part)
        if kind == "dynamic-tool" or kind.startswith("tool-"):
            return self._tool_part(part, ceiling)
        if kind in _INVISIBLE_PARTS:
            return Tally()
        # Unknown part types are counted as their JSON: conservative, never silent.
        return self.json_value(msgspec.to_builtins(part))

    def _file(self, part: Part) -> Tally:
        media_type = (part.mediaType or "").lower()
        url = part.url or ""
        name = self.text(part.filename) if part.filename else Tally()
        if media_type.startswith(TEXTUAL_MEDIA):
            # Text-like files are inlined as text by providers; their URL (base64 of the
            # text when it is a data URL) has more tokens than the text it carries.
            return name + self.text(url)
        payload = allow.data_url_payload_chars(url)
        return name + Tally(fixed=allow.media_allowance(media_type or None, payload))

    def _tool_part(self, part: Part, ceiling: int | None) -> Tally:
        tally = Tally(fixed=allow.TOOL_CALL_FRAMING)
        if part.toolName:
            tally += Tally(self.string(part.toolName))
        if part.toolCallId:
            tally += Tally(self.string(part.toolCallId))
        if part.input is not None:
            tally += self.json_value(part.input, ceiling=ceiling)
        if part.output is not None:
            tally += Tally(fixed=allow.TOOL_RESULT_FRAMING)
            tally += self.tool_output(part.output, ceiling=ceiling)
        return tally

    # -- tool outputs --------------------------------------------------------------------------

    def tool_output(self, output: Any, *, ceiling: int | None = None) -> Tally:
        """A tool result: a plain string, a supported wrapper, or any other JSON value."""
        if isinstance(output, str):
            return self.text(output, ceiling=ceiling)
        if isinstance(output, Mapping):
            kind = output.get("type")
            value = output.get("value")
            if kind in ("text", "error-text") and isinstance(value, str) and len(output) == 2:
                return self.text(value, ceiling=ceiling)
            if kind in ("json", "error-json") and "value" in output and len(output) == 2:
                return self.json_value(value, ceiling=ceiling)
            if kind == "content" and isinstance(value, list) and len(output) == 2:
                return self._content_items(value, ceiling)
        return self.json_value(output, ceiling=ceiling)

    def _content_items(self, items: list[Any], ceiling: int | None) -> Tally:
        tally = Tally()
        for item in items:
            item_kind = item.get("type") if isinstance(item, Mapping) else None
            if item_kind == "text" and isinstance(item.get("text"), str):
                tally += self.text(item["text"], ceiling=ceiling)
            elif item_kind in _WRAPPER_MEDIA_ITEMS and isinstance(item, Mapping):
                media_type = item.get("mediaType")
                if not isinstance(media_type, str):
                    media_type = "image/*" if str(item_kind).startswith("image") else None
                data = item.get("data")
                payload = len(data) if isinstance(data, str) else None
                tally += Tally(fixed=allow.media_allowance(media_type, payload))
            else:
                tally += self.json_value(item, ceiling=ceiling)
            if not tally.complete:
                break
        return tally

    # -- leaves --------------------------------------------------------------------------------

    def json_value(self, value: Any, *, ceiling: int | None = None) -> Tally:
        """A JSON value: the tokens of its compact text plus the byte-based allowance."""
        encoded = json_bytes(value)
        counted = self.text(encoded.decode("utf-8"), ceiling=ceiling)
        return counted + Tally(fixed=allow.json_allowance(encoded))

    def text(self, text: str, *, ceiling: int | None = None) -> Tally:
        if not text:
            return Tally()
        counted = count_text(self.encoder, text, ceiling=ceiling)
        return Tally(counted.tokens, 0, counted.complete)

    def string(self, text: str) -> int:
        """Tokens of a short, often repeated string (a role, a tool name, the system text),
        memoized by value."""
        found = self._strings.get(text)
        if found is not None:
            self._strings.move_to_end(text)
            return found
        tokens = count_text(self.encoder, text).tokens
        _remember(self._strings, text, tokens, _STRING_MEMO_LIMIT)
        return tokens


def _remember(memo: OrderedDict[Any, Any], key: Any, value: Any, limit: int) -> None:
    memo[key] = value
    memo.move_to_end(key)
    if len(memo) > limit:
        memo.popitem(last=False)
