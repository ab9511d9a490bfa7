"""The scripted provider (SPEC.md §5): steps, running out, requestLog, usage, error entries."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from segue import (
    Part,
    Provider,
    ProviderRequest,
    UsageError,
    count_request,
    create_provider,
    make_row,
)
from segue._errors import (
    ContextOverflowError,
    ProviderError,
    ScriptError,
    ScriptExhausted,
    UnknownModelError,
)
from segue._providers import (
    Media,
    Message,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    request_from_obj,
    to_messages,
)
from segue._providers.scripted import ScriptedProvider, tokens_counter

TOOL = {"name": "bash", "description": "run", "input_schema": {"type": "object"}}


def write_script(tmp_path: Path, responses: list[Any], **extra: Any) -> Path:
    path = tmp_path / "script.json"
    body = {"contextWindow": 1000, "encoding": "o200k_base", "responses": responses, **extra}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def request(text: str = "hello", tools: tuple[dict[str, Any], ...] = ()) -> ProviderRequest:
    return ProviderRequest("be brief", (make_row("user", text, id="u1"),), tools)


def test_steps_play_in_order_and_running_out_is_clear(tmp_path: Path) -> None:
    path = write_script(tmp_path, [
        {"text": "first", "toolCalls": [{"name": "bash", "input": {"cmd": "ls"}}],
         "usage": {"inputTokens": 5, "outputTokens": 2}},
        {"text": "second", "usage": {"input_tokens": 7, "output_tokens": 3}},
    ])
    provider = create_provider(f"scripted:{path}")
    assert isinstance(provider, Provider)
    assert (provider.context_window, provider.encoding) == (1000, "o200k_base")
    one = provider.step(request())
    assert one.text == "first"
    assert one.tool_calls == (ToolCall("call_1_1", "bash", {"cmd": "ls"}),)
    assert (one.usage.input_tokens, one.usage.output_tokens) == (5, 2)
    two = provider.step(request())
    assert (two.text, two.tool_calls, two.usage.input_tokens) == ("second", (), 7)
    with pytest.raises(ScriptExhausted, match=r"no response for step 3.*has 2 response") as info:
        provider.step(request())
    assert info.value.path == path
    assert info.value.steps == 2


def test_usage_defaults_to_the_real_count_of_the_request(tmp_path: Path) -> None:
    path = write_script(tmp_path, [
        {"text": "ok", "toolCalls": [{"name": "bash", "input": {"cmd": "ls"}, "id": "c9"}]},
        {"text": "half", "usage": {"outputTokens": 1}},
    ])
    provider = ScriptedProvider.from_file(path)
    req = request("count me " * 50, (TOOL,))
    expected = count_request(req.system, req.rows, req.tools, None, encoding="o200k_base")
    result = provider.step(req)
    assert result.usage.input_tokens == expected.tokens
    assert result.tool_calls[0].id == "c9"
    assert result.usage.output_tokens is not None
    assert 0 < result.usage.output_tokens < expected.tokens
    # A partial usage keeps what it gives and measures the rest.
    partial = provider.step(req)
    assert (partial.usage.input_tokens, partial.usage.output_tokens) == (expected.tokens, 1)


def test_an_injected_counter_is_used(tmp_path: Path) -> None:
    path = write_script(tmp_path, [{"text": "x"}])
    seen: list[ProviderRequest] = []

    def counter(req: ProviderRequest) -> int:
        seen.append(req)
        return 41 + len(seen)

    result = ScriptedProvider.from_file(path, counter=counter).step(request())
    assert (result.usage.input_tokens, result.usage.output_tokens) == (42, 43)
    assert seen[0] == request()
    assert seen[1].rows[0].text == "x"  # the reply, counted as a one-row request


def test_request_log_appends_every_request(tmp_path: Path) -> None:
    path = write_script(tmp_path, [{"text": "a"}, {"error": {"kind": "provider"}}],
                        requestLog="logs/requests.jsonl")
    provider = ScriptedProvider.from_file(path)
    first = request("first prompt", (TOOL,))
    provider.step(first)
    with pytest.raises(ProviderError):
        provider.step(request("second prompt"))
    with pytest.raises(ScriptExhausted):
        provider.step(request("third prompt"))
    lines = (tmp_path / "logs" / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    logged = [json.loads(line) for line in lines]
    assert logged[0]["system"] == "be brief"
    assert logged[0]["tools"] == [TOOL]
    assert logged[0]["messages"][0]["parts"][0]["text"] == "first prompt"
    assert request_from_obj(logged[0]) == first
    assert [m["messages"][0]["parts"][0]["text"] for m in logged[1:]] == [
        "second prompt", "third prompt"]


def test_error_entries_raise_the_named_error(tmp_path: Path) -> None:
    path = write_script(tmp_path, [
        {"error": {"kind": "context_overflow", "message": "prompt is too long"}},
        {"error": {"kind": "provider"}},
        {"text": "recovered"},
    ])
    provider = ScriptedProvider.from_file(path)
    with pytest.raises(ContextOverflowError, match="prompt is too long"):
        provider.step(request())
    with pytest.raises(ProviderError, match="scripted provider error") as info:
        provider.step(request())
    assert not isinstance(info.value, ContextOverflowError)
    assert provider.step(request()).text == "recovered"  # an error consumes its entry


def test_streamed_events_add_up_to_the_result(tmp_path: Path) -> None:
    text = "a long answer " * 10
    path = write_script(tmp_path, [{"text": text, "toolCalls": [{"name": "bash"}]}])
    events: list[StreamEvent] = []
    result = ScriptedProvider.from_file(path).step(request(), on_event=events.append)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert "".join(deltas) == result.text
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == list(result.tool_calls)
    assert result.tool_calls[0].input == {}


def test_position_persists_across_processes_with_a_state_dir(tmp_path: Path) -> None:
    path = write_script(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    state = tmp_path / "state"
    code = (
        "import sys; from pathlib import Path; from segue._messages import make_row;"
        "from segue._providers.request import ProviderRequest;"
        "from segue._providers.registry import create_provider;"
        "p = create_provider('scripted:' + sys.argv[1], state_dir=Path(sys.argv[2]));"
        "print(p.step(ProviderRequest('', (make_row('user', 'hi', id='u'),))).text)"
    )
    outputs = [
        subprocess.run([sys.executable, "-c", code, str(path), str(state)], check=True,
                       capture_output=True, text=True).stdout.strip()
        for _ in range(2)
    ]
    assert outputs == ["one", "two"]
    # Without a state dir every provider starts the script over.
    assert create_provider(f"scripted:{path}").step(request()).text == "one"
    # Editing the script starts it over too.
    write_script(tmp_path, [{"text": "new"}])
    assert create_provider(f"scripted:{path}", state_dir=state).step(request()).text == "new"


def test_relative_script_path_is_taken_from_cwd(tmp_path: Path) -> None:
    write_script(tmp_path, [{"text": "rel"}])
    provider = create_provider("scripted:script.json", cwd=tmp_path)
    assert provider.step(request()).text == "rel"
    assert provider.model == "scripted:script.json"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "must be a JSON object"),
        ({"encoding": "o200k_base", "responses": []}, "contextWindow must be a positive"),
        ({"contextWindow": 0, "encoding": "o200k_base", "responses": []}, "contextWindow"),
        ({"contextWindow": 10, "responses": []}, "encoding must be one of"),
        ({"contextWindow": 10, "encoding": "gpt2", "responses": []}, "encoding must be one of"),
        ({"contextWindow": 10, "encoding": "o200k_base"}, "responses must be a list"),
        ({"contextWindow": 10, "encoding": "o200k_base", "responses": [],
          "reqLog": "x"}, r"unknown key\(s\) reqLog"),
        ({"contextWindow": 10, "encoding": "o200k_base",
          "responses": [{"text": "x", "tool_calls": []}]}, r"response 1: unknown key.*tool_calls"),
        ({"contextWindow": 10, "encoding": "o200k_base",
          "responses": [{"toolCalls": [{"input": {}}]}]}, "name must be a non-empty string"),
        ({"contextWindow": 10, "encoding": "o200k_base",
          "responses": [{"toolCalls": [{"name": "a", "input": []}]}]}, "input must be an object"),
        ({"contextWindow": 10, "encoding": "o200k_base",
          "responses": [{"usage": {"inputTokens": -1}}]}, "non-negative"),
        ({"contextWindow": 10, "encoding": "o200k_base",
          "responses": [{"error": {"kind": "timeout"}}]}, "error must be"),
        ({"contextWindow": 10, "encoding": "o200k_base",
          "responses": [{"error": {"kind": "provider"}, "text": "x"}]}, "only the 'error' key"),
    ],
)
def test_bad_scripts_are_refused_with_the_path(tmp_path: Path, body: Any, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(ScriptError, match=message) as info:
        ScriptedProvider.from_file(path)
    assert str(path) in info.value.message


def test_unreadable_and_invalid_json_scripts(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot be read"):
        ScriptedProvider.from_file(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ScriptError, match="not valid JSON"):
        ScriptedProvider.from_file(broken)


@pytest.mark.parametrize(("model", "needs"), [
    ("openai:gpt-4o", "OPENAI_API_KEY"),
    ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
    ("openai-compatible:llama3.1", "contextWindow.openai-compatible:llama3.1"),
])
def test_api_providers_without_configuration_are_refused_clearly(model: str, needs: str) -> None:
    with pytest.raises(UsageError, match=re.escape(needs)):
        create_provider(model, environ={})


@pytest.mark.parametrize("model", ["gpt-4o", "foo:bar", "openai:", ":x", "openai: x"])
def test_bad_model_strings(model: str) -> None:
    with pytest.raises(UnknownModelError):
        create_provider(model)


def test_tokens_counter_matches_count_request() -> None:
    req = request("some words here", (TOOL,))
    assert tokens_counter("cl100k_base")(req) == count_request(
        req.system, req.rows, req.tools, None, encoding="cl100k_base").tokens


# -- the neutral message view ------------------------------------------------------------------


def test_to_messages_splits_tool_pairs_and_drops_reasoning() -> None:
    rows = [
        make_row("user", "do it", id="u", parts=[
            Part(type="file", mediaType="image/png", url="data:image/png;base64,AA")]),
        make_row("assistant", id="a", parts=[
            Part(type="reasoning", text="hmm"),
            Part(type="text", text="Looking."),
            Part(type="dynamic-tool", toolCallId="c1", toolName="bash", input={"cmd": "ls"},
                 state="output-available", output="a.txt"),
            Part(type="dynamic-tool", toolCallId="c2", toolName="bash", input={"cmd": "x"},
                 state="output-error", output="boom"),
            Part(type="step-start"),
            Part(type="text", text="Done."),
        ]),
    ]
    assert to_messages(rows) == (
        Message("user", (Text("do it"), Media("image/png", "data:image/png;base64,AA"))),
        Message("assistant", (Text("Looking."), ToolCall("c1", "bash", {"cmd": "ls"}),
                              ToolCall("c2", "bash", {"cmd": "x"}))),
        Message("user", (ToolResult("c1", "bash", "a.txt"),
                         ToolResult("c2", "bash", "boom", is_error=True))),
        Message("assistant", (Text("Done."),)),
    )


def test_messages_keep_tool_blocks_in_their_roles() -> None:
    with pytest.raises(UsageError):
        Message("user", (ToolCall("c", "bash"),))
    with pytest.raises(UsageError):
        Message("assistant", (ToolResult("c", "bash", "x"),))
