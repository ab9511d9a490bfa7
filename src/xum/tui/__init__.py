"""``xum chat --tui``: the chat in a full-screen terminal UI (Textual, the ``tui`` extra).

* :mod:`xum.tui.lines` — what the transcript shows, as plain values (pure; no Textual).
* :mod:`xum.tui.widgets` — the transcript, its entries and the question dialog.
* :mod:`xum.tui.app` — :class:`~xum.tui.app.ChatApp`, the view in front of
  :class:`xum.chat.ChatLoop`.

Textual is imported only by :func:`run_tui` (and the two modules above that need it), so
``import xum`` and the line chat never load it.
"""

from __future__ import annotations

import sys

from xum.chat.loop import SessionSource
from xum.errors import UsageError


def run_tui(sessions: SessionSource, *, agent_name: str | None = None) -> int:
    """Run the full-screen chat in this terminal until the user leaves; its exit status."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("xum chat --tui needs a terminal (without --tui, chat reads lines)")
    try:
        from xum.tui.app import ChatApp
    except ImportError as exc:
        raise UsageError(
            f"xum chat --tui needs Textual ({exc}): pip install 'xum[tui]'"
        ) from exc
    status = ChatApp(sessions, agent_name=agent_name).run()
    return 0 if status is None else status
