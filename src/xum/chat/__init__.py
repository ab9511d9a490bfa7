"""``xum chat``: a line-oriented interactive session over :class:`xum.session.Session`.

* :mod:`xum.chat.commands` — parsing a typed line into a message or a slash command (pure).
* :mod:`xum.chat.meter` — the context meter, "42% · rolls over by 75%" (pure).
* :mod:`xum.chat.sessions` — building the Session, and rebuilding it on ``/agent`` and
  ``/settings set`` while keeping the transcript store.
* :mod:`xum.chat.interrupt` — Ctrl-C stops a running turn at its next safe point.
* :mod:`xum.chat.loop` — the read–dispatch–print loop, driven by input/output callables.
"""

from xum.chat.interrupt import QuitNow, run_interruptible
from xum.chat.loop import ChatLoop, direct
from xum.chat.sessions import SessionMaker

__all__ = ["ChatLoop", "QuitNow", "SessionMaker", "direct", "run_interruptible"]
