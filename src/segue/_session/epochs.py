"""Window epochs: a send prepared against a window another send rolled over is never sent (R33).

Every workspace has an in-process *window epoch*. A send takes a :class:`WindowLease` (the
epoch it was prepared against) when it starts; a committed rollover advances the epoch. Before
each provider call and before a rollover admission prepares anything, the send checks its
lease: if another send of the same workspace rolled the window over in the meantime, its
request was assembled from the old window and it stops with :class:`~segue._errors.StaleWindow`
instead of sending it. The rollover's own send adopts the new epoch as part of advancing it,
so it goes on in the window it opened.

Invariants:

* Epochs are keyed by the workspace's session directory, so two Session objects over one
  workspace in one process (a chat rebuilt after ``/agent``, a library caller) share them.
* ``advance`` is called with the store lock held, right after the rollover batch is durable,
  so the epoch never moves ahead of, or lags behind, a committed window change another locked
  send could observe.
* The check happens immediately before the provider call; a rollover that commits while a
  provider call is already in flight cannot recall it, and that send's next step stops.
* Epochs live in memory only: a restarted process reads the window from the transcript.
"""

from __future__ import annotations

import threading
from pathlib import Path

from segue._errors import StaleWindow
from segue._workspace import Layout


class WindowEpochs:
    """The window epoch of each workspace in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._epochs: dict[Path, int] = {}

    def current(self, layout: Layout) -> int:
        with self._lock:
            return self._epochs.get(layout.session_dir, 0)

    def lease(self, layout: Layout) -> WindowLease:
        return WindowLease(self, layout, self.current(layout))

    def _advance(self, layout: Layout) -> int:
        with self._lock:
            epoch = self._epochs.get(layout.session_dir, 0) + 1
            self._epochs[layout.session_dir] = epoch
            return epoch


class WindowLease:
    """The window epoch one send was prepared against."""

    def __init__(self, epochs: WindowEpochs, layout: Layout, epoch: int) -> None:
        self._epochs = epochs
        self._layout = layout
        self.epoch = epoch

    @property
    def current(self) -> bool:
        return self._epochs.current(self._layout) == self.epoch

    def check(self, where: str) -> None:
        if not self.current:
            raise StaleWindow(
                "another send rolled the context window over while this one was running; "
                f"its request was prepared against the old window and was not sent ({where})"
            )

    def advance(self) -> None:
        """A rollover of this send committed: move the workspace on and adopt the epoch."""
        self.epoch = self._epochs._advance(self._layout)


#: The process-wide epochs every Session uses unless given its own.
WINDOW_EPOCHS = WindowEpochs()
