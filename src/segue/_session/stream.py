"""One send as a stream of events: ``for event in session.stream(text)`` (or ``async for``),
then ``.result``, the turn's :class:`~segue._session.result.TurnResult`.

The turn is the ordinary :meth:`Session.send <segue._session.core.Session.send>`, run in a
worker thread; its events reach the consumer through a queue, in order, as they happen.

Invariants:

* The session's own ``on_event`` sink still receives every event, in the worker thread,
  before the consumer sees it.
* Lock-step: after each event the turn waits until the consumer asks for the next one, so
  the turn is never ahead of what the consumer has seen. Breaking out right after an event
  therefore stops the turn at the first safe point after that event, deterministically
  (a ``ToolFinished`` you break on is the last tool call of the turn), and a slow consumer
  slows the turn instead of piling events up.
* One turn at a time per session: while a stream runs, starting another, or calling
  ``send``, ``compact`` or a clear on the session from another thread (the loop body
  included), is a UsageError (:func:`refuse_if_streaming`): the turn is paused between two of
  its steps, and a second one interleaved with it would not mean anything.
* Leaving the loop early (``break``, an exception in the loop body, ``close()``) or
  ``cancel()`` stops the turn: a reply still streaming stops at once and is kept as far as it
  came (R40, :mod:`segue._session.stoppable`), otherwise the turn stops at its next safe point;
  leaving waits for the worker, so once the loop is left nothing runs behind the caller's
  back; the steps that settled stay durable, as with Ctrl-C.
* An error the send raises (a store or tokenizer failure) is raised in the consumer, from
  the loop; context signals and provider errors end the turn with a result, as in ``send``.
* While an ``async for`` runs, :func:`current_loop` in the worker is the consumer's event
  loop, so an async approver is awaited there (:mod:`segue.api._approval`).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, cast

from segue._errors import UsageError
from segue._events import Event
from segue._session.admission import Cancellation
from segue._session.result import TurnResult

if TYPE_CHECKING:
    from segue._session.core import Session

_END = object()
_local = threading.local()
#: Sessions with a stream running, and the thread running its turn (weak: a dropped session
#: is never kept alive by this).
_busy: weakref.WeakKeyDictionary[Session, int] = weakref.WeakKeyDictionary()
_busy_lock = threading.Lock()


def refuse_if_streaming(session: Session, what: str) -> None:
    """A UsageError when a stream's turn runs on ``session`` in another thread."""
    with _busy_lock:
        worker = _busy.get(session)
    if worker is not None and worker != threading.get_ident():
        raise UsageError(
            f"a turn is streaming on this session: end its loop before you {what}"
        )


def current_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the ``async for`` this worker thread serves, if any."""
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    return loop


class TurnStream:
    """The events of one send; iterate it once, with ``for`` or ``async for``."""

    def __init__(self, session: Session, text: str) -> None:
        self._session = session
        self._text = text
        self._thread: threading.Thread | None = None
        #: released by the consumer when it asks for the next event (lock-step)
        self._ack = threading.Semaphore(0)
        #: set when the consumer has left the loop: the turn then runs on without waiting
        self._left = threading.Event()
        self._result: TurnResult | None = None
        self._error: BaseException | None = None
        #: Set it (``stream.cancellation.cancel()``) to stop the turn at its next safe point.
        self.cancellation = Cancellation()

    # -- the result ------------------------------------------------------------------------------

    @property
    def result(self) -> TurnResult:
        """The turn's result, once the loop has ended (a UsageError before)."""
        if self._result is None:
            raise UsageError(
                "the turn has not ended yet: iterate the stream to its end first (or call "
                "wait())"
            )
        return self._result

    def wait(self) -> TurnResult:
        """Run the turn to its end, dropping the events; its result."""
        if self._thread is None:
            for _ in self:
                pass
        return self.result

    def cancel(self) -> None:
        """Stop the turn (a streaming reply at once, R40); the loop then ends with a paused
        result. Safe from any thread."""
        self.cancellation.cancel()

    # -- sync ------------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Event]:
        return self._events()

    def _events(self) -> Iterator[Event]:
        items: queue.SimpleQueue[object] = queue.SimpleQueue()
        thread = self._start(items.put, None)
        finished = False
        try:
            while (item := items.get()) is not _END:
                yield cast(Event, item)
                self._ack.release()
            finished = True
        finally:
            self._leave(finished)
            thread.join()
        self._raise()

    # -- async -----------------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._aevents()

    async def _aevents(self) -> AsyncIterator[Event]:
        loop = asyncio.get_running_loop()
        items: asyncio.Queue[object] = asyncio.Queue()

        def put(item: object) -> None:
            # A closed loop (RuntimeError) has nobody listening any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(items.put_nowait, item)

        thread = self._start(put, loop)
        finished = False
        try:
            while (item := await items.get()) is not _END:
                yield cast(Event, item)
                self._ack.release()
            finished = True
        finally:
            self._leave(finished)
            await asyncio.to_thread(thread.join)
        self._raise()

    # -- the worker ------------------------------------------------------------------------------

    def _start(
        self, put: Callable[[object], None], loop: asyncio.AbstractEventLoop | None
    ) -> threading.Thread:
        if self._thread is not None:
            raise UsageError("a stream is iterated once; call session.stream() again to send")
        thread = threading.Thread(
            target=self._run, args=(put, loop), name="segue-turn", daemon=True
        )
        with _busy_lock:
            if self._session in _busy:
                raise UsageError("a turn is already streaming on this session; finish it first")
            self._thread = thread
            thread.start()
            _busy[self._session] = thread.ident or 0
        return thread

    def _run(self, put: Callable[[object], None], loop: asyncio.AbstractEventLoop | None) -> None:
        session = self._session
        sink = session.on_event

        def tee(event: Event) -> None:
            sink(event)
            if self._left.is_set():
                return  # nobody is listening: on to the next safe point
            put(event)
            self._ack.acquire()  # until the consumer asks for the next event

        _local.loop = loop
        session.on_event = tee
        try:
            self._result = session.send(self._text, cancellation=self.cancellation)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            self._error = exc
        finally:
            session.on_event = sink
            _local.loop = None
            with _busy_lock:
                _busy.pop(session, None)
            put(_END)

    def _leave(self, finished: bool) -> None:
        """The loop is left: early, the turn is cancelled and let go on to its safe point."""
        if not finished:
            self.cancellation.cancel()
            self._left.set()  # before the release: no event after this one waits
            self._ack.release()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error


__all__ = ["TurnStream", "current_loop"]
