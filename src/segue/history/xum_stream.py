"""A Xum stream in progress (SPEC.md §3 "Homes"): ``partial.json`` newer than the transcript.

Xum keeps the message it is streaming in ``sessions/<id>/partial.json`` and folds it into
``chat.jsonl`` when the stream ends. While that file is newer than the transcript a Xum
process may be writing the session, so segue never mutates it (no append, rewrite, clear or
recovery): it says so and stops. It never rewrites or removes ``partial.json`` itself.
"""

from __future__ import annotations

import os

from segue.errors import StoreError
from segue.history.paths import paths
from segue.workspace import Layout

PARTIAL_NAME = "partial.json"


def _mtime_ns(path: os.PathLike[str]) -> int | None:
    try:
        return os.lstat(path).st_mtime_ns
    except FileNotFoundError:
        return None


def stream_in_progress(layout: Layout) -> bool:
    """Whether ``partial.json`` exists and is newer than both transcript files."""
    p = paths(layout)
    partial = _mtime_ns(p.session_dir / PARTIAL_NAME)
    if partial is None:
        return False
    newest = max((t for t in (_mtime_ns(p.chat), _mtime_ns(p.archive)) if t is not None), default=0)
    return partial > newest


def refuse_during_stream(layout: Layout) -> None:
    """Raise StoreError when a Xum stream may be writing this session."""
    if stream_in_progress(layout):
        where = paths(layout).session_dir / PARTIAL_NAME
        raise StoreError(
            f"{where} is newer than the transcript: a Xum stream may be in progress in "
            f"workspace {layout.workspace_id!r}; segue leaves the session alone until it ends",
            code="stream_in_progress",
        )
