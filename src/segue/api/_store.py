"""``segue.open_store``: a workspace's transcript store for a library caller, chosen as
``segue`` and :func:`segue.open_session` choose it — ``store`` (a ``postgresql://`` URL)
when given, else the home's ``store.url`` setting, else the home's JSONL files.

What it returns is a :class:`~segue.MaintainedStore`: the core
:class:`~segue.TranscriptStore` (append a batch, read rows and entries, quarantine, clear,
the workspace lock) that works alike on every store, and the maintenance a tool of the
owner's may need (verify, recover, import, the lines as the store keeps them).
"""

from __future__ import annotations

import os

from segue._history.protocol import MaintainedStore
from segue._settings import load_settings, settings_path
from segue._stores import open_store as _open
from segue._workspace import Layout
from segue.api._where import resolve_layout


def open_store(
    workspace: str | Layout | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    store: str | None = None,
    durable: bool = True,
) -> MaintainedStore:
    """The store of one workspace (``workspace``, ``home`` and ``workdir`` as in
    :func:`segue.open_session`). ``durable``: fsync every append of the JSONL store.
    Close it when done (``with segue.open_store(...) as store:``): over PostgreSQL it holds
    connections."""
    layout, _ = resolve_layout(workspace, home=home, workdir=workdir)
    url = store if store is not None else load_settings(settings_path(layout.home)).get(
        "store.url"
    )
    return _open(layout, url if isinstance(url, str) else None, durable=durable)


__all__ = ["open_store"]
