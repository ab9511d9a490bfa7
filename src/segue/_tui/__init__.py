"""``segue chat --tui``: the chat in a full-screen terminal UI (Textual, the ``tui`` extra).

* :mod:`segue._tui.lines` — what the transcript shows, as plain values (pure; no Textual).
* :mod:`segue._tui.widgets` — the transcript, its entries and the question dialog.
* :mod:`segue._tui.app` — :class:`~segue._tui.app.ChatApp`, the view in front of
  :class:`segue._chat.ChatLoop`.

Textual is imported only by :func:`run_tui` (and the two modules above that need it), so
``import segue`` and the line chat never load it.
"""

from __future__ import annotations

import sys

from segue._chat.loop import SessionSource
from segue._errors import MissingSetup, UsageError
from segue._extras import install_hint


def run_tui(sessions: SessionSource, *, agent_name: str | None = None) -> int:
    """Run the full-screen chat in this terminal until the user leaves; its exit status."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("segue chat --tui needs a terminal (without --tui, chat reads lines)")
    try:
        from segue._tui.app import ChatApp
    except ImportError as exc:
        raise MissingSetup(
            f"segue chat --tui needs Textual ({exc}): {install_hint('tui')}"
        ) from exc
    status = ChatApp(sessions, agent_name=agent_name).run()
    return 0 if status is None else status
