"""Building the chat's Session, and rebuilding it when the agent or the settings change.

``/agent NAME`` and ``/settings set`` take effect on the next turn by building a new Session
through :func:`segue._session.factory.open_session` (so model choice, settings and the agent's
tool policy follow exactly the rules ``segue run`` follows), then keeping the running one's
transcript store. The provider is kept too when the model stays the same, so a provider's
position (the scripted one's place in its script) or connection is not thrown away.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from segue._events import EventSink
from segue._policy import available_agents
from segue._policy.approval import Mode
from segue._session import Session
from segue._session.factory import open_session
from segue._tools.gate import UNATTENDED
from segue._workspace import Layout


@dataclass(frozen=True)
class SessionMaker:
    layout: Layout
    workdir: Path
    #: ``-m``: when given it wins over the agent's and the settings' model on every rebuild.
    model: str | None = None
    durable: bool = True
    #: a PostgreSQL store's URL (None: the JSONL files)
    store_url: str | None = None
    #: ``--approve``: the approval mode of every Session built here (None: the settings').
    approval: Mode | None = None
    #: What a call that would ask is told when nobody can be asked (a chat on piped input).
    unattended: str = UNATTENDED

    def open(
        self, agent_name: str | None, on_event: EventSink, keep: Session | None = None
    ) -> Session:
        """A Session for ``agent_name`` (None: the default agent); with ``keep``, one that
        continues ``keep``'s transcript store (and provider, when the model is unchanged)."""
        fresh = open_session(
            self.layout,
            workdir=self.workdir,
            model=self.model,
            agent_name=agent_name,
            on_event=on_event,
            durable=self.durable,
            store_url=self.store_url,
            approval=self.approval,
            unattended=self.unattended,
        )
        if keep is None:
            return fresh
        same_model = fresh.provider.model == keep.provider.model
        keep.close()  # its MCP servers: the new session brings its own tools
        return Session(
            self.layout,
            keep.store,
            keep.provider if same_model else fresh.provider,
            agent=fresh.agent,
            tools=fresh.tools,
            config=fresh.config,
            # plan/explore are narrowed by a caller restriction (segue._tools.profile): keep it.
            restrictions=fresh.policy.restrictions,
            on_event=on_event,
            plugins=fresh.plugins,  # built from the (possibly changed) plugins setting
            approval=fresh.approval,  # the mode may follow a changed setting too
        )

    def agents(self) -> list[str]:
        return available_agents(self.workdir)
