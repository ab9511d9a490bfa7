"""The library's front door: open a session with settings, send or stream, approve tool
calls through a callback, read and search the transcript with or without the model's bounds.

* :mod:`~segue.api._session` — :func:`open_session` (keyword configuration, nothing written)
* :mod:`~segue.api._approval` — approvers: sync or async, answering Answer or bool
* :mod:`~segue.api._history` — :func:`open_history`: the owner's view and the model's view
* :mod:`~segue.api._store` — :func:`open_store`: a workspace's store, the one configured
* :mod:`~segue.api._tasks` — :func:`list_tasks`: the sub-agent tasks a workspace ran (R41)
* :mod:`~segue.api._where` — which workspace, home and working directory a call means

Streaming itself is the session's (:meth:`segue._session.core.Session.stream`,
:mod:`segue._session.stream`). Every name here is also exported from ``segue``.
"""

from segue.api._approval import ApproverLike
from segue.api._history import (
    History,
    HistoryItem,
    HistoryWindow,
    ModelHistory,
    NotFound,
    SearchHit,
    open_history,
)
from segue.api._session import open_session
from segue.api._store import open_store
from segue.api._tasks import TaskInfo, list_tasks

__all__ = [
    "ApproverLike",
    "History",
    "HistoryItem",
    "HistoryWindow",
    "ModelHistory",
    "NotFound",
    "SearchHit",
    "TaskInfo",
    "list_tasks",
    "open_history",
    "open_session",
    "open_store",
]
