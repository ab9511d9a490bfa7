"""Building sessions for tests: a real store in a temp SEGUE_HOME, the scripted provider, and a
test tool whose output size the script controls."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from segue._events import Event
from segue._history import HistoryStore
from segue._messages import Row
from segue._policy import resolve_agent
from segue._providers.request import ProviderRequest, request_from_obj
from segue._providers.scripted import ScriptedProvider
from segue._session import Session, SessionConfig
from segue._session.admission import Checkpoint, no_checkpoint
from segue._tools.base import FunctionTool, ToolRegistry
from segue._tools.builtin import builtin_tools
from segue._tools.gate import ALLOW_ALL
from segue._tools.profile import tool_profile
from segue._workspace import Layout


def _echo(args: Mapping[str, Any]) -> Any:
    word = str(args.get("word", "data"))
    return {"ok": True, "text": " ".join([word] * int(args.get("times", 1)))}


ECHO = FunctionTool(
    name="echo",
    description="Repeat a word.",
    input_schema={
        "type": "object",
        "properties": {"word": {"type": "string"}, "times": {"type": "integer"}},
    },
    fn=_echo,
)


#: The built-in tools the engine tests are calibrated against.
ENGINE_TOOLS = ("memory", "session_history")


@dataclass
class Harness:
    tmp: Path
    layout: Layout
    store: HistoryStore
    script_path: Path
    log_path: Path
    events: list[Event] = field(default_factory=list)

    def session(
        self,
        *,
        agent: str = "exec",
        experiment: bool = True,
        threshold: int = 70,
        checkpoint: Checkpoint = no_checkpoint,
        max_steps: int = 32,
        workspace_tools: bool = False,
        builtin: Sequence[str] = ENGINE_TOOLS,
    ) -> Session:
        """A session over the harness's store and script. The engine tests are calibrated
        (window sizes, thresholds) against the memory + session_history + echo tool set;
        ``workspace_tools`` adds the file and shell tools pinned to :attr:`workdir`;
        ``builtin`` names the built-in tools kept otherwise."""
        provider = ScriptedProvider.from_file(self.script_path, state_dir=self.tmp / "state")
        resolved = resolve_agent(agent, self.workdir)
        profile = tool_profile(resolved)
        tools = builtin_tools(
            self.layout, self.workdir, write_scope=profile.write_scope, store=self.store
        )
        if not workspace_tools:
            tools = ToolRegistry(t for name in builtin if (t := tools.get(name)) is not None)
        tools.add(ECHO)
        return Session(
            self.layout,
            self.store,
            provider,
            agent=resolved,
            tools=tools,
            config=SessionConfig(experiment=experiment, threshold=threshold, max_steps=max_steps),
            restrictions=profile.restrictions,
            on_event=self.events.append,
            checkpoint=checkpoint,
            approval=ALLOW_ALL,  # these tests are about the engine, not approval (R38)
        )

    @property
    def workdir(self) -> Path:
        """The workspace directory the file and shell tools are pinned to."""
        return self.tmp / "work"

    def requests(self) -> list[ProviderRequest]:
        if not self.log_path.exists():
            return []
        return [
            request_from_obj(json.loads(line)) for line in self.log_path.read_text().splitlines()
        ]

    def rows(self) -> list[Row]:
        return list(self.store.rows())

    def agent_file(self, name: str, text: str) -> None:
        folder = self.tmp / "work" / ".segue" / "agents"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.md").write_text(text)


def harness(
    tmp: Path, responses: Sequence[Mapping[str, Any]], *, context_window: int = 4000
) -> Harness:
    layout = Layout(tmp / "home", "ws")
    (tmp / "work").mkdir(exist_ok=True)
    script = tmp / "script.json"
    log = tmp / "requests.jsonl"
    script.write_text(
        json.dumps(
            {
                "contextWindow": context_window,
                "encoding": "o200k_base",
                "responses": list(responses),
                "requestLog": str(log),
            }
        )
    )
    return Harness(tmp, layout, HistoryStore(layout, durable=False), script, log)


def request_text(request: ProviderRequest) -> str:
    """Everything a provider saw, as one string."""
    return json.dumps(
        {"system": request.system, "rows": [r.text for r in request.rows]}, ensure_ascii=False
    ) + json.dumps([[p.output for p in r.parts] for r in request.rows], ensure_ascii=False)


def echo(word: str, times: int) -> dict[str, Any]:
    return {"name": "echo", "input": {"word": word, "times": times}}
