"""``segue chat``: a line-oriented interactive session over :class:`segue._session.Session`.

* :mod:`segue._chat.commands` — parsing a typed line into a message or a slash command (pure).
* :mod:`segue._chat.meter` — the context meter, "42% · rolls over by 75%" (pure).
* :mod:`segue._chat.sessions` — building the Session, and rebuilding it on ``/agent`` and
  ``/settings set`` while keeping the transcript store.
* :mod:`segue._chat.interrupt` — Ctrl-C stops a running turn at its next safe point.
* :mod:`segue._chat.loop` — the read–dispatch–print loop, driven by input/output callables.
"""

from segue._chat.interrupt import QuitNow, run_interruptible
from segue._chat.loop import ChatLoop, direct
from segue._chat.sessions import SessionMaker

__all__ = ["ChatLoop", "QuitNow", "SessionMaker", "direct", "run_interruptible"]
