"""segue's context engine inside other agent frameworks (SPEC.md §9 "Libraries").

* :mod:`segue.integrations.openai_agents` — a ``Session`` for the OpenAI Agents SDK backed by
  segue's store, and :class:`~segue.integrations.openai_agents.RolloverSession`, which rolls
  over to fresh windows instead of compacting (``pip install 'segue[openai-agents]'``).
* :mod:`segue.integrations.pydantic_ai` — a history processor that hands the model only the
  active window, a toolset with ``session_history`` and ``new_context``, and persistence of
  every run's messages (``pip install 'segue[pydantic-ai]'``).

Nothing here is imported by ``import segue``: each module imports its framework when it is
imported itself, and says which extra to install when the framework is missing.
"""

#: Nothing is imported here: each integration is a public module of its own.
__all__: list[str] = []
