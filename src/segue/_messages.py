"""Rows: pure values in the shape Xum writes, and the JSONL codec.

These types are pure values. Identity (the ``historySequence`` a row gets, which window it
belongs to, where it sits in a file) is a storage concern owned by ``segue._history``.

Wire format (SPEC.md §3), one JSON object per line::

    {"id": "user-1", "role": "user", "metadata": {"timestamp": ..., "historySequence": 0},
     "parts": [{"type": "text", "text": "Hello", "state": "done"}], "workspaceId": "demo"}

Invariants kept here:

* Unknown fields survive a decode/encode round trip, at the top level, in ``metadata`` and in
  every part (``extra``). ``metadata`` stays a plain mapping on purpose: boundary validation
  (R11) must see fields with the wrong type instead of the codec rejecting the whole row, so a
  damaged reset row still counts as a privacy floor.
* ``id``, ``role``, ``parts`` (objects with a string ``type``) and ``metadata`` (an object) are
  required; anything else is not a row and raises :class:`RowDecodeError`. Callers that read
  files skip such lines; writers keep them byte-exact.
* Lone UTF-16 surrogates (which JavaScript writers can emit as ``\\ud800`` escapes) are decoded
  and re-encoded as escapes, never as invalid UTF-8.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeGuard

import msgspec

from segue._errors import RowDecodeError

Role = Literal["user", "assistant", "system"]
ROLES: frozenset[str] = frozenset({"user", "assistant", "system"})

#: Format tag written nowhere in rows (Xum's shape has no version field) but used by
#: exports and caches so a later change of this codec is detectable.
CODEC_VERSION = "segue-row-1"

_PART_KEYS = (
    "type",
    "text",
    "state",
    "mediaType",
    "url",
    "filename",
    "toolCallId",
    "toolName",
    "input",
    "output",
)
_ROW_KEYS = frozenset({"id", "role", "metadata", "parts", "workspaceId"})


class Part(msgspec.Struct, frozen=True, kw_only=True):
    """One part of a row. ``type`` is ``text | reasoning | file | dynamic-tool`` (others are
    kept as they are). Absent fields are ``None`` and are not written; a JSON ``null`` in the
    input is kept in ``extra`` so it is written back as it was."""

    type: str
    text: str | None = None
    state: str | None = None
    mediaType: str | None = None
    url: str | None = None
    filename: str | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    input: Any = None
    output: Any = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


class Row(msgspec.Struct, frozen=True, kw_only=True):
    """One transcript row. Treat ``metadata`` and ``extra`` as read-only; build changed rows
    with :func:`with_metadata` or ``msgspec.structs.replace``."""

    id: str
    role: Role
    parts: tuple[Part, ...] = ()
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    workspaceId: str | None = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    # -- typed views over metadata (wrong types read as absent) -----------------------------
    @property
    def sequence(self) -> int | None:
        return _int_or_none(self.metadata.get("historySequence"))

    @property
    def timestamp(self) -> int | None:
        return _int_or_none(self.metadata.get("timestamp"))

    def flag(self, name: str) -> bool:
        """True only for a metadata value that is exactly ``true``."""
        return self.metadata.get(name) is True

    @property
    def mux_type(self) -> str | None:
        mux = self.metadata.get("muxMetadata")
        if isinstance(mux, dict):
            value = mux.get("type")
            if isinstance(value, str):
                return value
        return None

    @property
    def text(self) -> str:
        """The concatenated text parts (what a person would read)."""
        return "".join(p.text for p in self.parts if p.type == "text" and p.text is not None)


def _int_or_none(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _is_role(value: object) -> TypeGuard[Role]:
    # isinstance first: an object or a list is unhashable and cannot be looked up in a set
    return isinstance(value, str) and value in ROLES


def _is_str_dict(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


# -- construction helpers ------------------------------------------------------------------


def text_part(text: str) -> Part:
    return Part(type="text", text=text, state="done")


def make_row(
    role: Role,
    text: str | None = None,
    *,
    id: str,
    parts: Iterable[Part] = (),
    metadata: Mapping[str, Any] | None = None,
    workspace_id: str | None = None,
) -> Row:
    all_parts = tuple(parts)
    if text is not None:
        all_parts = (text_part(text), *all_parts)
    return Row(
        id=id,
        role=role,
        parts=all_parts,
        metadata=dict(metadata or {}),
        workspaceId=workspace_id,
    )


def with_metadata(row: Row, **changes: Any) -> Row:
    """A copy of ``row`` with metadata keys set (a value of ``None`` removes the key)."""
    meta = dict(row.metadata)
    for key, value in changes.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    return msgspec.structs.replace(row, metadata=meta)


# -- codec -----------------------------------------------------------------------------------


def _load(line: bytes) -> Any:
    try:
        return msgspec.json.decode(line)
    except RecursionError:
        raise RowDecodeError("not a JSON row: nested too deeply") from None
    except msgspec.DecodeError as exc:
        # msgspec refuses lone-surrogate escapes, which JSON allows and JS writers emit;
        # the stdlib accepts them. Invalid UTF-8 fails here too, as it must, and so does
        # nesting too deep for either decoder (msgspec's limit, then Python's recursion).
        try:
            return json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise RowDecodeError(f"not a JSON row: {exc}") from None


def row_from_obj(obj: Any) -> Row:
    """Build a Row from a decoded JSON object, or raise RowDecodeError."""
    if not _is_str_dict(obj):
        raise RowDecodeError("a row must be a JSON object")
    row_id = obj.get("id")
    role = obj.get("role")
    raw_parts = obj.get("parts", [])
    metadata = obj.get("metadata", {})
    workspace = obj.get("workspaceId")
    if not isinstance(row_id, str):
        raise RowDecodeError("row has no string 'id'")
    if not _is_role(role):
        raise RowDecodeError(f"row {row_id!r} has an invalid role {role!r}")
    if not isinstance(raw_parts, list):
        raise RowDecodeError(f"row {row_id!r}: 'parts' must be a list")
    if not _is_str_dict(metadata):
        raise RowDecodeError(f"row {row_id!r}: 'metadata' must be an object")
    if workspace is not None and not isinstance(workspace, str):
        raise RowDecodeError(f"row {row_id!r}: 'workspaceId' must be a string")
    parts = tuple(_part_from_obj(row_id, p) for p in raw_parts)
    extra = {k: v for k, v in obj.items() if k not in _ROW_KEYS}
    if "workspaceId" in obj and workspace is None:
        extra["workspaceId"] = None
    return Row(
        id=row_id,
        role=role,
        parts=parts,
        metadata=metadata,
        workspaceId=workspace,
        extra=extra,
    )


def _part_from_obj(row_id: str, obj: Any) -> Part:
    if not _is_str_dict(obj) or not isinstance(obj.get("type"), str):
        raise RowDecodeError(f"row {row_id!r}: every part must be an object with a 'type'")
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in obj.items():
        if key in _PART_KEYS and value is not None:
            known[key] = value
        else:
            extra[key] = value
    for key in ("text", "state", "mediaType", "url", "filename", "toolCallId", "toolName"):
        if key in known and not isinstance(known[key], str):
            extra[key] = known.pop(key)
    return Part(**known, extra=extra)


#: Deepest nesting a row may have. Every reader walks rows recursively (projection, display,
#: export), at a few Python frames per level against a limit of 1,000 frames, so a deeper
#: line is not a row: it is an unparseable line, kept byte-exact and skipped. Rows Xum writes
#: nest a few levels (tool inputs and outputs); 128 is far above that.
MAX_NESTING = 128
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def _too_deep(data: bytes) -> bool:
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return False  # the common case: too few brackets to nest that deep
    depth = 0
    for match in _BRACKET.finditer(_JSON_STRING.sub(b'""', data)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > MAX_NESTING:
                return True
        else:
            depth -= 1
    return False


def decode_row(line: bytes | str) -> Row:
    """Decode one line (without or with its newline) into a Row."""
    data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if _too_deep(data):
        raise RowDecodeError(f"not a JSON row: nested more than {MAX_NESTING} levels deep")
    return row_from_obj(_load(data))


def part_to_obj(part: Part) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _PART_KEYS:
        value = getattr(part, key)
        if value is not None:
            out[key] = value
    out.update(part.extra)
    return out


def row_to_obj(row: Row) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.id,
        "role": row.role,
        "metadata": row.metadata,
        "parts": [part_to_obj(p) for p in row.parts],
    }
    if row.workspaceId is not None:
        out["workspaceId"] = row.workspaceId
    out.update(row.extra)
    return out


def encode_obj(obj: Any) -> bytes:
    """Compact JSON, UTF-8; lone surrogates are written as ``\\uXXXX`` escapes."""
    try:
        return msgspec.json.encode(obj)
    except (msgspec.EncodeError, UnicodeEncodeError):
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def encode_row(row: Row) -> bytes:
    """One row as JSON bytes, without the trailing newline."""
    return encode_obj(row_to_obj(row))
