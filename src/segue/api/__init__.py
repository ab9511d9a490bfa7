"""The library's front door: open a session with settings, send or stream, approve tool
calls through a callback, read and search the transcript with or without the model's bounds.

* :mod:`~segue.api.session` — :func:`open_session` (keyword configuration, nothing written)
* :mod:`~segue.api.approval` — approvers: sync or async, answering Answer or bool
* :mod:`~segue.api.history` — :func:`open_history`: the owner's view and the model's view
* :mod:`~segue.api.store` — :func:`open_store`: a workspace's store, the one configured
* :mod:`~segue.api.tasks` — :func:`list_tasks`: the sub-agent tasks a workspace ran (R41)
* :mod:`~segue.api.where` — which workspace, home and working directory a call means

Streaming itself is the session's (:meth:`segue.session.core.Session.stream`,
:mod:`segue.session.stream`). Every name here is also exported from ``segue``.
"""

from segue.api.approval import ApproverLike
from segue.api.history import (
    History,
    HistoryItem,
    HistoryWindow,
    ModelHistory,
    NotFound,
    SearchHit,
    open_history,
)
from segue.api.session import open_session
from segue.api.store import open_store
from segue.api.tasks import TaskInfo, list_tasks

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
