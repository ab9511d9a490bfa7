"""Stay out of a session Xum is writing (SPEC.md §3 "Homes").

Xum keeps the reply it is streaming in ``partial.json`` next to the transcript and folds it
into ``chat.jsonl`` when the stream ends. While that file is newer than the transcript a Xum
process may be mid-stream, and any change segue made there (recovery, rotation, a receipt, an
appended row) could race it. So every mutation of a session directory starts with
:func:`refuse_if_streaming`, before it takes the lock: a refused command writes nothing at
all, not even the lock file. Reading is always allowed.

segue itself never creates, rewrites or removes ``partial.json``.
"""

from __future__ import annotations

import os

from segue._errors import StreamInProgress
from segue._workspace import Layout

PARTIAL_NAME = "partial.json"


def _mtime_ns(path: os.PathLike[str] | str) -> int | None:
    try:
        return os.lstat(path).st_mtime_ns
    except FileNotFoundError:
        return None


def stream_in_progress(layout: Layout) -> bool:
    """True while ``partial.json`` exists and is newer than the transcript (``chat.jsonl``,
    or the archive where there is no active file). Without any transcript a partial.json
    is a stream that has not reached the transcript yet, so it counts as in progress."""
    partial = _mtime_ns(layout.session_dir / PARTIAL_NAME)
    if partial is None:
        return False
    transcript = _mtime_ns(layout.chat)
    if transcript is None:
        transcript = _mtime_ns(layout.archive)
    return transcript is None or partial > transcript


def refuse_if_streaming(layout: Layout) -> None:
    """Raise :class:`StreamInProgress` when a Xum stream may be writing this session."""
    if stream_in_progress(layout):
        raise StreamInProgress(layout.session_dir)
