"""Edited-file carryover: which files the agent changed, handed from one context window to the
next (R4, R10, R21). Pure: values, the window arithmetic, the JSON form and the rendering.

Two things are kept (persisted by :mod:`segue._tools.carryover_file`):

* ``edits`` — every ``file_write`` / ``file_edit``, anchored to the transcript's *next
  sequence number* at the time of the edit. An edit belongs to the window whose boundary has a
  smaller sequence number, so edits made before a reset boundary (``/clear --soft``, however it
  was issued) or before an earlier handoff are never counted again: they are stale by
  construction, even if nobody deleted them.
* ``carried`` — the handoff: the compact file list (path and *current state* — size, sha256
  prefix, mtime, or deleted — taken when the handoff was prepared) that the window opened by
  the boundary row ``boundaryId`` was given, plus ``fromBoundaryId``, the window it was taken
  from.

A window sees the carried list when it was opened by ``carried.boundaryId``: that list is
rendered into its system text, so the text is the same for every request of the window. The
next handoff gives a new window this window's edits *and* what this window was given (newest
first, at most ``MAX_FILES``), so a long task keeps knowing what it touched across several
rollovers; ``/clear --soft`` drops everything.

If a handoff was persisted but its boundary never reached the transcript (a crash or a
cancellation between the rollover's cleanup and its append), the current window is still the
one named by ``fromBoundaryId``: its files are adopted back as this window's edits, so nothing
is lost and nothing stale is shown.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from segue._context.boundaries import is_boundary, is_compaction_boundary
from segue._messages import Row

VERSION = 1
#: Files listed in one handoff (newest edit first); the section stays a few hundred tokens.
MAX_FILES = 64
#: Edits remembered within one window (one per path); older ones are dropped first.
MAX_EDITS = 512

State = Literal["present", "deleted", "not-a-file"]


@dataclass(frozen=True)
class Edit:
    path: str
    sequence: int
    at_ms: int


@dataclass(frozen=True)
class FileState:
    path: str
    state: State
    size: int | None = None
    sha256: str | None = None
    mtime_ms: int | None = None


@dataclass(frozen=True)
class Carried:
    boundary_id: str
    from_boundary_id: str | None
    files: tuple[FileState, ...]


@dataclass(frozen=True)
class Carryover:
    edits: tuple[Edit, ...] = ()
    carried: Carried | None = None
    #: The workspace directory the paths are relative to (one workspace id, one directory:
    #: an edit from another directory starts the list afresh).
    root: str | None = None


EMPTY = Carryover()


@dataclass(frozen=True)
class Anchor:
    """Where a window starts: its boundary row's id and sequence (None / -1 for the root)."""

    boundary_id: str | None
    boundary_sequence: int


def anchor_of(window: Sequence[Row]) -> Anchor:
    """The anchor of the window ``window`` holds (its boundary row first, as loaded)."""
    if window and (is_boundary(window[0]) or is_compaction_boundary(window[0])):
        head = window[0]
        seq = head.sequence
        return Anchor(head.id, seq if seq is not None else -1)
    return Anchor(None, -1)


def record(carry: Carryover, edit: Edit, root: str) -> Carryover:
    """``carry`` with ``edit`` as the newest edit of its path under ``root``."""
    if carry.root is not None and carry.root != root:
        return Carryover((edit,), None, root)
    kept = [e for e in carry.edits if e.path != edit.path][-(MAX_EDITS - 1) :]
    return Carryover((*kept, edit), carry.carried, root)


def carried_into(carry: Carryover, anchor: Anchor) -> tuple[FileState, ...]:
    """The file list the window at ``anchor`` was given (empty if it was given none)."""
    c = carry.carried
    if c is None or anchor.boundary_id is None or c.boundary_id != anchor.boundary_id:
        return ()
    return c.files


def to_hand_off(carry: Carryover, anchor: Anchor) -> list[str]:
    """Paths the next window is given: this window's edits, then the files this window was
    given (or, after an unpublished handoff, adopted back), newest first, each once."""
    own = sorted(
        (e for e in carry.edits if e.sequence > anchor.boundary_sequence),
        key=lambda e: (e.sequence, e.at_ms),
        reverse=True,
    )
    paths = [e.path for e in own]
    c = carry.carried
    if c is not None:
        given = c.boundary_id == anchor.boundary_id and anchor.boundary_id is not None
        unpublished = c.boundary_id != anchor.boundary_id and c.from_boundary_id == (
            anchor.boundary_id
        )
        if given or unpublished:
            paths.extend(f.path for f in c.files)
    out: list[str] = []
    for path in paths:
        if path not in out:
            out.append(path)
    return out[:MAX_FILES]


def handed_off(
    carry: Carryover, anchor: Anchor, new_boundary_id: str, files: Sequence[FileState]
) -> Carryover:
    """The persisted state once the window at ``anchor`` handed ``files`` to the window the
    boundary ``new_boundary_id`` opens: no pending edits, the new carried list."""
    return Carryover((), Carried(new_boundary_id, anchor.boundary_id, tuple(files)), carry.root)


# -- rendering ------------------------------------------------------------------------------------


def _describe(f: FileState) -> str:
    if f.state == "deleted":
        return f"- {f.path}: deleted"
    if f.state == "not-a-file":
        return f"- {f.path}: no longer a regular file"
    details = [f"{f.size} bytes" if f.size is not None else "size unknown"]
    if f.sha256:
        details.append(f"sha256 {f.sha256}")
    if f.mtime_ms is not None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(f.mtime_ms / 1000))
        details.append(f"modified {stamp}")
    return f"- {f.path}: {', '.join(details)}"


def render(files: Sequence[FileState]) -> str:
    """The system-text section listing carried files ('' when there are none)."""
    if not files:
        return ""
    lines = [
        "# Files edited earlier in this session",
        "",
        "You changed these workspace files in earlier context windows (state when this "
        "window opened, newest edit first). Read a file again before relying on its contents.",
        "",
        *(_describe(f) for f in files),
    ]
    return "\n".join(lines)


def with_carryover(system: str, files: Sequence[FileState]) -> str:
    section = render(files)
    return f"{system}\n\n{section}" if section else system


# -- the JSON form --------------------------------------------------------------------------------


class MalformedCarryover(ValueError):
    """The persisted carryover is not in the form :func:`to_obj` writes."""


def to_obj(carry: Carryover) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "version": VERSION,
        "edits": [{"path": e.path, "sequence": e.sequence, "atMs": e.at_ms} for e in carry.edits],
        "carried": None,
        "root": carry.root,
    }
    if carry.carried is not None:
        obj["carried"] = {
            "boundaryId": carry.carried.boundary_id,
            "fromBoundaryId": carry.carried.from_boundary_id,
            "files": [_state_obj(f) for f in carry.carried.files],
        }
    return obj


def _state_obj(f: FileState) -> dict[str, Any]:
    obj: dict[str, Any] = {"path": f.path, "state": f.state}
    if f.state == "present":
        obj.update({"size": f.size, "sha256": f.sha256, "mtimeMs": f.mtime_ms})
    return obj


def from_obj(obj: object) -> Carryover:
    """Parse the persisted form; MalformedCarryover names what is wrong."""
    if not isinstance(obj, Mapping) or obj.get("version") != VERSION:
        raise MalformedCarryover(f"not a version-{VERSION} carryover object")
    edits_obj = obj.get("edits")
    if not isinstance(edits_obj, list):
        raise MalformedCarryover("edits must be a list")
    edits = tuple(Edit(_str(e, "path"), _int(e, "sequence"), _int(e, "atMs")) for e in edits_obj)
    carried_obj = obj.get("carried")
    carried: Carried | None = None
    if carried_obj is not None:
        if not isinstance(carried_obj, Mapping) or not isinstance(carried_obj.get("files"), list):
            raise MalformedCarryover("carried must be an object with a files list")
        source = carried_obj.get("fromBoundaryId")
        if source is not None and not isinstance(source, str):
            raise MalformedCarryover("carried.fromBoundaryId must be a string or null")
        carried = Carried(
            _str(carried_obj, "boundaryId"),
            source,
            tuple(_file_state(f) for f in carried_obj["files"]),
        )
    root = obj.get("root")
    if root is not None and not isinstance(root, str):
        raise MalformedCarryover("root must be a string or null")
    return Carryover(edits, carried, root)


def _file_state(obj: object) -> FileState:
    raw = _str(obj, "state")
    path = _str(obj, "path")
    if raw == "deleted":
        return FileState(path, "deleted")
    if raw == "not-a-file":
        return FileState(path, "not-a-file")
    if raw != "present":
        raise MalformedCarryover(f"unknown file state {raw!r}")
    assert isinstance(obj, Mapping)  # _str checked it
    sha = obj.get("sha256")
    if sha is not None and not isinstance(sha, str):
        raise MalformedCarryover("sha256 must be a string or null")
    return FileState(path, "present", _int(obj, "size"), sha, _int(obj, "mtimeMs"))


def _str(obj: object, key: str) -> str:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if not isinstance(value, str):
        raise MalformedCarryover(f"{key} must be a string")
    return value


def _int(obj: object, key: str) -> int:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedCarryover(f"{key} must be an integer")
    return value
