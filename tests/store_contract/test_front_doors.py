"""The front doors work on PostgreSQL exactly as on the JSONL files: a library session
(``segue.open_session(..., store=URL)``), the pydantic-ai integration and the OpenAI Agents
SDK session write the same rows and read back the same history on both. Models are
scripted (pydantic-ai's ``FunctionModel``, a ``scripted:`` model file, a fixed Agents SDK
input), as in the integration tests; what differs between two runs (row ids, timestamps)
is left out of the comparison, and each comparison checks that it compared something."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import segue
from tests.integrations.helpers import DETAIL, chunk
from tests.store_contract.conftest import Stores, same_everywhere

KINDS = ("jsonl", "postgresql")  # the two stores a home can be configured with


@pytest.fixture
def two_kinds(every_kind: dict[str, Stores]) -> dict[str, Stores]:
    return {kind: every_kind[kind] for kind in KINDS}


def _shape(row: segue.Row) -> tuple[Any, ...]:
    """What two runs of one script must store alike (ids and times left out)."""
    parts = tuple((p.type, p.text, p.toolName, p.state) for p in row.parts)
    mux = row.metadata.get("muxMetadata")
    return (row.role, row.sequence, parts, row.metadata.get("contextBoundaryKind"),
            mux.get("type") if isinstance(mux, dict) else None)


def _stored(stores: Stores, workspace: str) -> list[tuple[Any, ...]]:
    with segue.open_store(workspace, home=stores.home, store=stores.url) as store:
        return [_shape(row) for row in store.rows()]


def _script(path: Path, *texts: str) -> str:
    path.write_text(json.dumps({"contextWindow": 16000, "encoding": "o200k_base",
                                "responses": [{"text": t} for t in texts]}), encoding="utf-8")
    return f"scripted:{path}"


def _library_session(stores: Stores) -> dict[str, Any]:
    work = stores.home / "work"
    work.mkdir()
    model = _script(stores.home / "script.json", "first answer", "second answer", "third")
    with segue.open_session("lib", home=stores.home, workdir=work, model=model,
                            store=stores.url, durable=False) as session:
        session.send("the old secret")
        session.send("more")
        assert session.clear_soft()
        session.send("after the floor")
        with segue.open_history(session) as history:
            shown = [(w.kind, [(i.role, i.text) for i in history.items(w.window_id)])
                     for w in history.windows()]
    with segue.open_history("lib", home=stores.home, store=stores.url,
                            include_cleared=True) as everything:
        found = [h.snippet for h in everything.search("secret")]
    return {"rows": _stored(stores, "lib"), "history": shown, "found": found}


def test_a_library_session_on_postgresql_is_the_session_on_jsonl(
    two_kinds: dict[str, Stores],
) -> None:
    answer = same_everywhere(two_kinds, _library_session)
    assert isinstance(answer, dict)
    assert answer["history"] == [("reset", [("user", "after the floor"),
                                            ("assistant", "third")])]
    assert answer["found"] == ["the old secret"]
    assert len(answer["rows"]) == 7  # two turns, the floor, a third turn


def _pydantic_run(stores: Stores) -> dict[str, Any]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from segue.integrations.pydantic_ai import SegueHistory

    def answer(messages: list[ModelMessage]) -> ModelResponse:
        result: Any = next(p.content for m in reversed(messages) for p in m.parts
                           if isinstance(p, ToolReturnPart) and p.tool_name == "session_history")
        found = [i for i in result["items"] if DETAIL[-9:] in i["text"]]
        return ModelResponse(parts=[TextPart(found[0]["windowId"] if found else "not found")])

    steps: list[Any] = [
        # Fixed call ids: pydantic-ai's own are random, and the ids are counted in the
        # window's tokens, so a random id could move a rollover by one call between two runs.
        *[lambda _, n=n: ModelResponse(parts=[ToolCallPart("read_chunk", {"n": n},
                                                           tool_call_id=f"call_{n:02d}")])
          for n in range(12)],
        lambda _: ModelResponse(parts=[ToolCallPart(
            "session_history", {"action": "search", "query": "vault CODE"},
            tool_call_id="call_12")]),
        answer,
    ]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return steps.pop(0)(messages)  # type: ignore[no-any-return]

    history = SegueHistory("pyd", model="openai:gpt-4o", context_window=4000,
                           home=stores.home, durable=False, store=stores.url)
    agent = Agent(FunctionModel(model), instructions="Read the report, then answer from it.",
                  capabilities=[history.capability()])

    @agent.tool_plain
    def read_chunk(n: int) -> str:
        """Read chunk ``n`` of the report."""
        return chunk(n)

    try:
        output = asyncio.run(agent.run("Read the report, then tell me the vault code.")).output
    finally:
        history.close()
    with segue.open_history("pyd", home=stores.home, store=stores.url) as read:
        windows = [w.kind for w in read.windows()]
    return {"output": output, "rows": _stored(stores, "pyd"), "windows": windows}


def test_pydantic_ai_rolls_over_and_looks_back_alike_on_postgresql(
    two_kinds: dict[str, Stores],
) -> None:
    pytest.importorskip("pydantic_ai")
    answer = same_everywhere(two_kinds, _pydantic_run)
    assert isinstance(answer, dict)
    assert answer["output"] == "w:0"  # the detail was found in the first window
    assert answer["windows"].count("rollover") >= 1, answer["windows"]
    assert any(shape[4] == "context-window-rollover" for shape in answer["rows"])
    assert len(answer["rows"]) > 12


def _agents_session(stores: Stores) -> dict[str, Any]:
    from segue.integrations.openai_agents import SegueSession

    session = SegueSession("sdk", home=stores.home, durable=False, store=stores.url)
    try:
        asyncio.run(session.add_items([{"role": "user", "content": "ochre question"}]))
        asyncio.run(session.add_items([
            {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
             "content": [{"type": "output_text", "text": "ochre answer", "annotations": []}]},
        ]))
        items = asyncio.run(session.get_items())
        newest = asyncio.run(session.get_items(limit=1))
        rows = _stored(stores, "sdk")
        asyncio.run(session.clear_session())
        cleared = asyncio.run(session.get_items())
    finally:
        session.close()
    return {"items": items, "newest": newest, "rows": rows, "cleared": cleared}


def test_an_agents_sdk_session_on_postgresql_is_the_session_on_jsonl(
    two_kinds: dict[str, Stores],
) -> None:
    pytest.importorskip("agents")
    answer = same_everywhere(two_kinds, _agents_session)
    assert isinstance(answer, dict)
    assert answer["items"][0] == {"role": "user", "content": "ochre question"}
    assert len(answer["items"]) == 2 and answer["newest"] == answer["items"][1:]
    assert [shape[0] for shape in answer["rows"]] == ["user", "assistant"]
    assert answer["cleared"] == []


def test_pop_item_takes_back_the_newest_row_where_the_store_can(
    two_kinds: dict[str, Stores],
) -> None:
    """The one documented difference: the JSONL store removes its newest row; the PostgreSQL
    transcript only grows, so ``pop_item`` there is refused with a one-line error."""
    pytest.importorskip("agents")
    from segue.integrations.openai_agents import SegueSession

    for kind, stores in two_kinds.items():
        session = SegueSession("pop", home=stores.home, durable=False, store=stores.url)
        try:
            asyncio.run(session.add_items([{"role": "user", "content": "one"}]))
            asyncio.run(session.add_items([{"role": "user", "content": "two"}]))
            if kind == "jsonl":
                assert asyncio.run(session.pop_item()) == {"role": "user", "content": "two"}
                assert asyncio.run(session.get_items()) == [{"role": "user", "content": "one"}]
                continue
            with pytest.raises(segue.UsageError, match="only grows") as refused:
                asyncio.run(session.pop_item())
            assert "\n" not in str(refused.value)
            assert len(asyncio.run(session.get_items())) == 2
        finally:
            session.close()


def _task_then_hard_clear(stores: Stores) -> dict[str, Any]:
    """A parent hands a task to a child agent, whose transcript is kept in a store of the
    parent's kind; a hard clear of the parent destroys the child's too (R41)."""
    work = stores.home / "work"
    work.mkdir()
    script = stores.home / "tasks.json"
    script.write_text(json.dumps({"contextWindow": 16000, "encoding": "o200k_base", "responses": [
        {"toolCalls": [{"name": "task", "input": {"agent": "explore",
                                                  "prompt": "Say which colour it is."}}]},
        {"text": "The colour is teal."},
        {"text": "The task says teal."},
    ]}), encoding="utf-8")
    with segue.open_session("parent", home=stores.home, workdir=work,
                            model=f"scripted:{script}", store=stores.url, durable=False,
                            approve="full") as session:
        assert session.send("ask a child").text == "The task says teal."
        tasks = [t.task_id for t in segue.list_tasks(session)]
        child = _stored(stores, tasks[0])
        session.clear_hard()
        left = [t.task_id for t in segue.list_tasks(session)]
    with segue.open_store(tasks[0], home=stores.home, store=stores.url) as store:
        after = list(store.rows())
    return {"tasks": tasks, "child": child, "left": left, "after": after,
            "parent": _stored(stores, "parent")}


def test_a_hard_clear_destroys_the_tasks_in_the_parents_store(
    two_kinds: dict[str, Stores],
) -> None:
    answer = same_everywhere(two_kinds, _task_then_hard_clear)
    assert isinstance(answer, dict)
    assert answer["tasks"] == ["parent.t1"]
    assert [shape[0] for shape in answer["child"]] == ["user", "assistant"]
    assert ("The colour is teal.", "done") in [
        (p[1], p[3]) for shape in answer["child"] for p in shape[2]]
    assert answer["left"] == [] and answer["after"] == [] and answer["parent"] == []
