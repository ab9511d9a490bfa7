"""The approver a library caller gives: a plain function (or coroutine function) of one
:class:`~segue._tools.gate.ApprovalRequest` (SPEC.md R38).

It may answer with an :class:`~segue._tools.gate.Answer` or a ``bool`` (``True`` is
``Answer.YES``, ``False`` is ``Answer.NO``), directly or as an awaitable:

* in :meth:`Session.astream <segue._session.core.Session.astream>` an awaitable answer is
  awaited on the caller's event loop (the turn runs in a worker thread meanwhile);
* elsewhere it is run to completion with :func:`asyncio.run` in the turn's thread.

Fail closed: an answer of any other type, or an approver that raises, means the call is not
run; the model reads a ``tool_failed`` result naming the problem (the gate asks before the
tool runs, and a failing approval never runs the tool).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from segue._errors import UsageError
from segue._session.stream import current_loop
from segue._tools.gate import Answer, ApprovalRequest, Approver

Reply: TypeAlias = Answer | bool
#: What :func:`segue.open_session` accepts as ``approver``.
ApproverLike: TypeAlias = Callable[[ApprovalRequest], Reply | Awaitable[Reply]]


def as_answer(reply: object) -> Answer:
    """The gate's answer for what an approver returned (see the module docstring)."""
    if isinstance(reply, Answer):
        return reply
    if isinstance(reply, bool):
        return Answer.YES if reply else Answer.NO
    raise UsageError(
        f"an approver must return segue.Answer or a bool, not {type(reply).__name__}; "
        "the call was not run"
    )


def adapt(approver: ApproverLike) -> Approver:
    """The gate's :data:`~segue._tools.gate.Approver` for a library caller's function."""
    if not callable(approver):
        raise UsageError(
            f"approver must be a function of one ApprovalRequest, not {type(approver).__name__}"
        )

    def ask(request: ApprovalRequest) -> Answer:
        reply: object = approver(request)
        if inspect.isawaitable(reply):
            reply = _wait(reply)
        return as_answer(reply)

    return ask


def _wait(awaitable: Awaitable[Any]) -> Any:
    loop = current_loop()
    if loop is not None:  # astream: the caller's loop runs the coroutine, this thread waits
        return asyncio.run_coroutine_threadsafe(_coro(awaitable), loop).result()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_coro(awaitable))
    raise UsageError(
        "an async approver cannot be awaited here: this thread runs an event loop; use "
        "session.astream() (or session.send() from a thread without one)"
    )


async def _coro(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


__all__ = ["ApproverLike", "Reply", "adapt", "as_answer"]
