"""``LISTEN`` on a workspace's channel: how ``segue history follow`` waits on PostgreSQL
(:class:`segue._history.watch.Watch`; every append sends ``NOTIFY`` in its own transaction, so
the wake-up arrives when the batch commits and never before)."""

from __future__ import annotations

from segue.postgres._schema import connect, translated


def channel(workspace_id: str) -> str:
    """The ``LISTEN``/``NOTIFY`` channel of a workspace (:mod:`segue.postgres._keys`)."""
    from segue.postgres._keys import notify_channel

    return notify_channel(workspace_id)


class ListenWatch:
    """``LISTEN`` on a workspace's channel over an autocommit connection of its own."""

    def __init__(self, url: str, workspace_id: str) -> None:
        self.url = url
        self._conn = connect(url)
        with translated("cannot watch the transcript", url):
            self._conn.execute(f"LISTEN {channel(workspace_id)}")

    def wait(self, timeout: float) -> bool:
        with translated("cannot watch the transcript", self.url):
            woke = False
            for _ in self._conn.notifies(timeout=timeout, stop_after=1):
                woke = True
            # drain what else arrived meanwhile: one read of the store answers them all
            for _ in self._conn.notifies(timeout=0):
                pass
            return woke

    def close(self) -> None:
        self._conn.close()


