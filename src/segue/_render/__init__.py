"""How segue shows a turn to a person, shared by the line interfaces (``run``, ``chat``,
``demo``) and the full-screen chat:

* :mod:`segue._render.tool_text` — a tool call and its result as a person reads them (pure).
* :mod:`segue._render.lines` — the entries an engine event adds, as plain values (pure): the
  one place the words of a rollover, a warning, a compaction or a notice are written.
* :mod:`segue._render.terminal` — those entries written to a terminal, styled apart from the
  model's and the user's words (R9).

Nothing here imports the command line, the chat loop or the TUI: they import this.
"""
