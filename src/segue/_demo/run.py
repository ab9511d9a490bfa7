"""``segue demo``: a recorded agent run replayed through the real engine, then a look back.

What runs is the product, not a mock of it: a :class:`~segue._session.Session` over a real
:class:`~segue._history.HistoryStore` in the given ``SEGUE_HOME``, the scripted provider reading
script files the demo writes into ``<home>/demo/``, the real ``session_history`` tool, with
the token-budget experiment on and a context window small enough to roll over repeatedly
(:mod:`segue._demo.sizing`). Only the recorded run's own tools are replayed
(:mod:`segue._demo.replay`): nothing the recorded agent ran is executed here.

Steps:

1. replay: the run's turns are sent one by one; the scripted model makes the recorded steps.
2. look back: the demo picks a line of tool output that only window ``w:0`` holds
   (:mod:`segue._demo.detail`) and asks about it. A scripted model cannot read tool results, so
   the demo writes this turn's script after the replay, from the transcript: search for the
   call's command, ``read_item`` on the ``w:0`` item holding the line, answer with the line.
3. verify, from what is on disk, never from the script: at least two strict rollovers in the
   transcript before the look back (else :class:`~segue._errors.DemoFailed`, raised before the
   look back); then the search result lists that item in ``w:0``, the ``read_item`` result
   contains the line, and the request the model got before it searched did not contain the
   line, so it could only have come from the look back. A failed look-back check is reported
   as ``Retrieval.found = False`` with its reason; the command line then exits 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from segue._context.boundaries import is_strict_rollover
from segue._context.rollover import lead_in_text
from segue._demo.detail import Detail, choose_detail
from segue._demo.plan import Turn, plan_turns, recorded_calls, run_messages, script_responses
from segue._demo.replay import REPLAY_LABEL, Tape, replay_tools
from segue._demo.sizing import Plan, Sizes, choose_plan
from segue._demo.trajectory import load_packaged, packaged_names, trajectory_rows
from segue._errors import DemoFailed, UsageError
from segue._events import EventSink, ignore
from segue._history import HistoryStore
from segue._messages import Part, Row, make_row
from segue._policy import SESSION_HISTORY_TOOL, resolve_agent
from segue._providers.scripted import ScriptedProvider
from segue._retrieval.tool import SessionHistoryTool
from segue._session import Session, SessionConfig, TurnResult
from segue._tokens import count_request, count_row, count_text
from segue._tools.base import ToolRegistry
from segue._tools.gate import ALLOW_ALL
from segue._tools.memory import MemoryTool
from segue._views.windows import WindowSummary, window_summaries
from segue._workspace import Layout

DEFAULT_TRAJECTORY = "i_got_id_demo__web"
DEFAULT_WORKSPACE = "demo"
ENCODING = "o200k_base"
MIN_ROLLOVERS = 2


@dataclass(frozen=True)
class Retrieval:
    query: str
    item_id: str
    window_id: str
    detail: str
    found: bool
    #: why ``found`` is False
    problem: str | None = None


@dataclass(frozen=True)
class DemoReport:
    trajectory: str
    home: Path
    workspace_id: str
    context_window: int
    threshold: int
    windows: tuple[WindowSummary, ...]
    rollovers: int
    #: rollovers before the look-back turn
    replay_rollovers: int
    retrieval: Retrieval
    turns: tuple[TurnResult, ...]
    answer: str

    @property
    def ok(self) -> bool:
        return self.retrieval.found and self.rollovers >= MIN_ROLLOVERS

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "trajectory": self.trajectory,
            "home": str(self.home),
            "workspaceId": self.workspace_id,
            "contextWindow": self.context_window,
            "threshold": self.threshold,
            "windows": [w.to_obj() for w in self.windows],
            "rollovers": self.rollovers,
            "replayRollovers": self.replay_rollovers,
            "retrieval": {
                "query": self.retrieval.query,
                "itemId": self.retrieval.item_id,
                "windowId": self.retrieval.window_id,
                "found": self.retrieval.found,
                "detail": self.retrieval.detail,
                "problem": self.retrieval.problem,
            },
        }


# -- preparing ---------------------------------------------------------------------------------


def _tools(layout: Layout, tape: Tape) -> ToolRegistry:
    """The replayed tools and the two built-ins that need no working directory: the real
    ``session_history`` and ``memory`` tools (the classes ``builtin_tools`` registers). The
    built-in file and shell tools are left out on purpose: the demo executes nothing."""
    registry = ToolRegistry(replay_tools(tape))
    for tool in (SessionHistoryTool(layout), MemoryTool(layout)):
        if registry.get(tool.name) is not None:
            raise DemoFailed(f"the recorded run has its own tool named {tool.name!r}")
        registry.add(tool)
    return registry


def _sizes(prompt: str, tools: ToolRegistry, turns: Sequence[Turn]) -> Sizes:
    schemas = tools.advertised(lambda _name: True)
    lead_in = make_row("user", lead_in_text("w:1", "w:0", "mid-stream"), id="lead-in")
    overhead = count_request(prompt, [lead_in], schemas, None, encoding=ENCODING).tokens
    prompts = [count_row(make_row("user", t.prompt, id="u"), None, encoding=ENCODING).tokens
               for t in turns]
    steps: list[int] = []
    outputs: list[int] = []
    for turn in turns:
        for step in turn.steps:
            parts = [Part(type="text", text=step.text, state="done")] if step.text else []
            for call in step.calls:
                output = f"{REPLAY_LABEL}\n{call.output}"
                outputs.append(count_text(json.dumps(output), None, encoding=ENCODING).tokens)
                parts.append(Part(type="dynamic-tool", toolCallId=call.call_id,
                                  toolName=call.name, input=dict(call.input),
                                  state="output-available", output=output))
            row = make_row("assistant", id="a", parts=parts)
            steps.append(count_row(row, None, encoding=ENCODING).tokens)
    return Sizes(overhead, prompts, steps, outputs)


def _write_script(
    path: Path, responses: Sequence[Mapping[str, Any]], window: int, log: str
) -> None:
    script = {"contextWindow": window, "encoding": ENCODING, "requestLog": log,
              "responses": list(responses)}
    path.write_text(json.dumps(script, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _session(
    layout: Layout,
    store: HistoryStore,
    script: Path,
    tools: ToolRegistry,
    on_event: EventSink,
    *,
    threshold: int,
    max_steps: int,
) -> Session:
    return Session(
        layout,
        store,
        ScriptedProvider.from_file(script),
        agent=resolve_agent("exec", script.parent),
        tools=tools,
        config=SessionConfig(experiment=True, threshold=threshold, max_steps=max_steps),
        on_event=on_event,
        # The demo's tools replay recorded outputs: they act on nothing, so nothing asks.
        approval=ALLOW_ALL,
    )


def _send(session: Session, prompt: str, what: str) -> TurnResult:
    result = session.send(prompt)
    if result.status != "completed":
        raise DemoFailed(f"{what} did not complete ({result.status}): {result.reason}")
    return result


# -- the look back -----------------------------------------------------------------------------


def lookback_responses(detail: Detail) -> list[dict[str, Any]]:
    """The scripted model's three steps: search, read the w:0 hit, answer with the line."""
    return [
        {
            "text": "That was in an earlier context window; I'll look it up.",
            "toolCalls": [{"name": SESSION_HISTORY_TOOL,
                           "input": {"action": "search", "match": "literal",
                                     "query": detail.query}}],
        },
        {
            "text": f"The oldest match is item {detail.item_id}, in window w:0. Reading it.",
            "toolCalls": [{"name": SESSION_HISTORY_TOOL,
                           "input": {"action": "read_item", "item_id": detail.item_id}}],
        },
        {"text": f"The first time, it printed:\n\n    {detail.line}\n"},
    ]


def _history_outputs(rows: Sequence[Row], action: str) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for row in rows:
        for part in row.parts:
            if (
                part.type == "dynamic-tool"
                and part.toolName == SESSION_HISTORY_TOOL
                and isinstance(part.input, dict)
                and part.input.get("action") == action
                and isinstance(part.output, dict)
            ):
                found.append(part.output)
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def verify_retrieval(rows: Sequence[Row], detail: Detail, first_request: Any) -> Retrieval:
    """Check the look back from the transcript and the request log (module docstring, 3);
    ``found`` is False, with the reason in ``problem``, when any check fails."""

    def failed(problem: str) -> Retrieval:
        return Retrieval(detail.query, detail.item_id, "", detail.line, False, problem)

    if any(detail.line in s for s in _strings(first_request)):
        return failed("the line was already in the model's context before it looked back")
    searches = _history_outputs(rows, "search")
    reads = _history_outputs(rows, "read_item")
    if not searches or not reads:
        return failed("the transcript has no session_history search and read_item results")
    hits = [i for i in searches[-1].get("items", []) if isinstance(i, dict)]
    if not any(i.get("itemId") == detail.item_id and i.get("windowId") == "w:0" for i in hits):
        return failed(
            f"the search for {detail.query!r} did not list item {detail.item_id} of w:0: "
            f"{json.dumps(searches[-1])[:300]}"
        )
    read = reads[-1]
    items = [i for i in read.get("items", []) if isinstance(i, dict)]
    if read.get("ok") is not True or not items:
        return failed(f"read_item failed: {json.dumps(read)[:300]}")
    text = items[0].get("text")
    if not isinstance(text, str) or detail.line not in text:
        return failed(f"read_item of item {detail.item_id} does not contain {detail.line!r}")
    return Retrieval(
        detail.query, detail.item_id, str(items[0].get("windowId")), detail.line, True, None
    )


def _rollovers(rows: Sequence[Row]) -> int:
    return sum(1 for row in rows if is_strict_rollover(row))


# -- the whole demo ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoSetup:
    """Everything decided before the demo runs; :func:`run_demo` plays it once (the tape
    is consumed)."""

    layout: Layout
    trajectory: str
    turns: tuple[Turn, ...]
    tape: Tape
    tools: ToolRegistry
    plan: Plan


def prepare_demo(layout: Layout, trajectory: str = DEFAULT_TRAJECTORY) -> DemoSetup:
    """Load and plan the recorded run for ``layout``, whose workspace must have no transcript
    yet (the demo never writes into an existing conversation)."""
    if next(HistoryStore(layout).rows(), None) is not None:
        raise UsageError(
            f"workspace {layout.workspace_id!r} in {layout.home} already has a transcript; "
            "run the demo in a fresh --home or another -w workspace"
        )
    recorded = load_packaged(trajectory)
    rows = trajectory_rows(run_messages(recorded), prefix="rec", actions_as_tools=True)
    turns = tuple(plan_turns(rows))
    tape = Tape(recorded_calls(turns), source=trajectory)
    tools = _tools(layout, tape)
    agent_prompt = resolve_agent("exec", layout.home).prompt
    plan = choose_plan(_sizes(agent_prompt, tools, turns))
    return DemoSetup(layout, trajectory, turns, tape, tools, plan)


def _quiet(_prompt: str) -> None:
    """The default ``on_prompt``."""


def run_demo(
    setup: DemoSetup,
    *,
    on_event: EventSink = ignore,
    on_prompt: Callable[[str], None] = _quiet,
) -> DemoReport:
    """Replay, look back, verify (module docstring). ``on_prompt`` sees each user message
    before it is sent; ``on_event`` sees the engine's events."""
    layout, trajectory, plan, tools = setup.layout, setup.trajectory, setup.plan, setup.tools
    store = HistoryStore(layout)
    folder = layout.home / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    replay_script = folder / "replay-script.json"
    _write_script(
        replay_script, script_responses(setup.turns), plan.context_window, "replay-requests.jsonl"
    )
    steps = max(len(t.steps) for t in setup.turns) + 1
    session = _session(
        layout, store, replay_script, tools, on_event, threshold=plan.threshold, max_steps=steps
    )
    results: list[TurnResult] = []
    for n, turn in enumerate(setup.turns, 1):
        on_prompt(turn.prompt)
        results.append(_send(session, turn.prompt, f"replayed turn {n}"))
    setup.tape.check_finished()
    replayed = list(store.rows())
    rollovers = _rollovers(replayed)
    if rollovers < MIN_ROLLOVERS:
        raise DemoFailed(
            f"the replay of {trajectory} rolled over {rollovers} time(s), fewer than "
            f"{MIN_ROLLOVERS}: the recorded run is too short for the demo; try another "
            f"--trajectory ({', '.join(n for n in packaged_names() if n != trajectory)})"
        )

    detail = choose_detail(replayed)
    if detail is None:
        raise DemoFailed(f"window w:0 of {trajectory} has no line only it holds; nothing to ask")
    lookback_script = folder / "lookback-script.json"
    log = folder / "lookback-requests.jsonl"
    _write_script(lookback_script, lookback_responses(detail), plan.context_window, log.name)
    session = _session(
        layout, store, lookback_script, tools, on_event, threshold=plan.threshold, max_steps=4
    )
    question = detail.question()
    on_prompt(question)
    results.append(_send(session, question, "the look-back turn"))

    final_rows = list(store.rows())
    first_request = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    return DemoReport(
        trajectory=trajectory,
        home=layout.home,
        workspace_id=layout.workspace_id,
        context_window=plan.context_window,
        threshold=plan.threshold,
        windows=tuple(window_summaries(final_rows)),
        rollovers=_rollovers(final_rows),
        replay_rollovers=rollovers,
        retrieval=verify_retrieval(final_rows, detail, first_request),
        turns=tuple(results),
        answer=results[-1].text,
    )
