"""MCP servers in ``mcp.servers`` give their tools to segue's agents (SPEC.md §9, R12, R20,
R38): a real stdio server (tests/mcp/toy_server.py) started by the real ``segue run``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from segue import SettingsError
from segue._mcp.client import McpTools
from segue._mcp.config import ServerSpec, parse_servers
from tests.front import read_rows
from tests.mcp.helpers import run_segue

TOY = str(Path(__file__).parent / "toy_server.py")


def _spec(markers: Path, fillers: int = 0, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [TOY, str(markers), str(fillers)], **extra}


def _setup(tmp: Path, responses: list[dict[str, Any]], *, fillers: int = 0,
           percent: int | None = None, servers: dict[str, Any] | None = None) -> dict[str, Any]:
    markers = tmp / "markers"
    markers.mkdir(parents=True, exist_ok=True)
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    settings: dict[str, Any] = {
        "mcp": {"servers": servers if servers is not None
                else {"toy": _spec(markers, fillers, trusted=True)}}
    }
    if percent is not None:
        settings["mcp"]["toolSearchPercent"] = percent
    (home / "settings.json").write_text(json.dumps(settings))
    log = tmp / "requests.jsonl"
    script = tmp / "script.json"
    script.write_text(json.dumps({"contextWindow": 64000, "encoding": "o200k_base",
                                  "requestLog": str(log), "responses": responses}))
    return {"home": home, "markers": markers, "log": log, "model": f"scripted:{script}"}


def _requests(log: Path) -> list[dict[str, Any]]:
    return read_rows(log)


def _tool_names(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["tools"]]


def _outputs(home: Path) -> list[Any]:
    chat = home / "sessions" / "w" / "chat.jsonl"
    rows = [json.loads(x) for x in chat.read_text().splitlines()]
    return [p["output"] for r in rows for p in r["parts"] if p["type"] == "dynamic-tool"]


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"text": "", "toolCalls": [{"name": name, "input": args}]}


DONE = {"text": "done"}


def test_tools_are_advertised_and_run_and_the_server_stops_with_the_session(
    tmp_path: Path,
) -> None:
    env = _setup(tmp_path, [_call("mcp__toy__echo", {"text": "hi"}), DONE])
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "say hi")
    assert out.returncode == 0, out.stderr
    first = _requests(env["log"])[0]
    assert {"mcp__toy__echo", "mcp__toy__write_note", "file_read"} <= set(_tool_names(first))
    echo = next(t for t in first["tools"] if t["name"] == "mcp__toy__echo")
    assert echo["description"] == "Echo the text back, unchanged."
    assert _outputs(env["home"]) == [{"ok": True, "content": "echo: hi"}]
    pid = int((env["markers"] / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize("trusted", [None, False, True])
def test_read_only_only_when_a_trusted_server_says_so(tmp_path: Path, trusted: bool | None) -> None:
    """R38: ``readOnlyHint`` is believed only from a server the user marked ``trusted``."""
    (tmp_path / "m").mkdir()
    extra = {} if trusted is None else {"trusted": trusted}
    spec = parse_servers("mcp.servers", {"toy": _spec(tmp_path / "m", **extra)})
    source = McpTools(spec, workdir=tmp_path)
    try:
        tools = {t.name: t for t in source.load()}
    finally:
        source.close()
    assert getattr(tools["mcp__toy__echo"], "read_only", False) is (trusted is True)
    assert getattr(tools["mcp__toy__write_note"], "read_only", False) is False


def test_an_untrusted_servers_read_only_hint_still_asks(tmp_path: Path) -> None:
    """``echo`` says readOnlyHint, but its server is not marked trusted: ``segue run`` (which
    cannot ask) denies it durably, and the server never sees the call."""
    markers = tmp_path / "markers"
    env = _setup(tmp_path, [_call("mcp__toy__echo", {"text": "hi"}), DONE],
                 servers={"toy": _spec(markers)})
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "say hi")
    assert out.returncode == 0, out.stderr
    (denied,) = _outputs(env["home"])
    assert denied["error"]["code"] == "approval_denied"
    assert "echo: hi" not in json.dumps(_outputs(env["home"]))
    # The same call from the same server, once trusted, runs without asking.
    env = _setup(tmp_path / "again", [_call("mcp__toy__echo", {"text": "hi"}), DONE],
                 servers={"toy": _spec(markers, trusted=True)})
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "say hi")
    assert _outputs(env["home"]) == [{"ok": True, "content": "echo: hi"}]


def test_tool_policy_narrows_mcp_tools(tmp_path: Path) -> None:
    env = _setup(tmp_path, [_call("mcp__toy__write_note", {"text": "x"}), DONE])
    agents = tmp_path / ".segue" / "agents"
    agents.mkdir(parents=True)
    (agents / "narrow.md").write_text(
        "---\nname: narrow\ntools:\n  add: [\"mcp__toy__echo\"]\n---\nYou are narrow.\n"
    )
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "--agent", "narrow", "go")
    assert out.returncode == 0, out.stderr
    assert _tool_names(_requests(env["log"])[0]) == ["mcp__toy__echo"]
    assert _outputs(env["home"])[0]["error"]["code"] == "tool_not_allowed"
    assert not (env["markers"] / "note.txt").exists()


def test_many_schemas_are_deferred_and_a_found_tool_is_advertised_next_step(
    tmp_path: Path,
) -> None:
    env = _setup(
        tmp_path,
        [_call("tool_search", {"query": "echo"}), _call("mcp__toy__echo", {"text": "a"}), DONE],
        fillers=40,
    )
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "go")
    assert out.returncode == 0, out.stderr
    first, second, _third = _requests(env["log"])
    assert "tool_search" in _tool_names(first)
    assert not any(n.startswith("mcp__") for n in _tool_names(first))
    assert "file_read" in _tool_names(first)  # built-ins are never deferred
    assert "mcp__toy__echo" in _tool_names(second)
    assert "mcp__toy__filler_3" not in _tool_names(second)
    search, echo = _outputs(env["home"])
    assert [t["name"] for t in search["tools"]] == ["mcp__toy__echo"]
    assert echo == {"ok": True, "content": "echo: a"}


def test_without_pressure_nothing_is_deferred(tmp_path: Path) -> None:
    env = _setup(tmp_path, [DONE], fillers=30, percent=100)
    assert run_segue(env["home"], tmp_path, "run", "-m", env["model"], "go").returncode == 0
    names = _tool_names(_requests(env["log"])[0])
    assert "tool_search" not in names
    assert "mcp__toy__filler_29" in names


def test_a_server_that_dies_mid_call_is_a_tool_error_not_a_crash(tmp_path: Path) -> None:
    env = _setup(
        tmp_path,
        [_call("mcp__toy__crash", {}), _call("mcp__toy__echo", {"text": "again"}), DONE],
    )
    out = run_segue(env["home"], tmp_path, "run", "--approve", "full", "-m", env["model"], "go")
    assert out.returncode == 0, out.stderr
    crash, after = _outputs(env["home"])
    assert crash["error"]["code"] == "mcp_server_unavailable"
    assert after["error"]["code"] == "mcp_server_unavailable"
    assert "toy" in after["error"]["message"]


def test_a_tool_the_server_does_not_call_read_only_needs_approval(tmp_path: Path) -> None:
    """R38: an MCP tool is read-only only when the server says so; ``crash`` does not, so
    ``segue run`` (which cannot ask) denies it, durably, and the server is never called."""
    env = _setup(tmp_path, [_call("mcp__toy__crash", {}), DONE])
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "go")
    assert out.returncode == 0, out.stderr
    (denied,) = _outputs(env["home"])
    assert denied["error"]["code"] == "approval_denied"


def test_a_server_that_cannot_start_is_reported_and_the_turn_goes_on(tmp_path: Path) -> None:
    env = _setup(tmp_path, [DONE], servers={"gone": {"command": str(tmp_path / "missing")}})
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "go")
    assert out.returncode == 0, out.stderr
    assert "MCP server 'gone' did not start" in out.stderr
    assert not any(n.startswith("mcp__") for n in _tool_names(_requests(env["log"])[0]))


def test_a_slow_call_is_cancelled_and_the_server_stays_usable(tmp_path: Path) -> None:
    markers = tmp_path / "m"
    markers.mkdir()
    source = McpTools(parse_servers("mcp.servers", {"toy": _spec(markers)}), workdir=tmp_path)
    try:
        tools = {t.name: t for t in source.load()}
        slow: Any = tools["mcp__toy__slow"]
        started = markers / "slow-started"
        result = slow.run_cancellable({}, started.exists)  # cancel once the server is in it
        assert result["error"]["code"] == "cancelled"
        assert tools["mcp__toy__echo"].run({"text": "still"}) == {
            "ok": True, "content": "echo: still"}
    finally:
        source.close()


def test_a_call_past_its_timeout_answers_mcp_timeout(tmp_path: Path) -> None:
    markers = tmp_path / "m"
    markers.mkdir()
    spec = parse_servers("mcp.servers", {"toy": _spec(markers, timeout=0.3)})
    source = McpTools(spec, workdir=tmp_path)
    try:
        slow = {t.name: t for t in source.load()}["mcp__toy__slow"]
        assert slow.run({})["error"]["code"] == "mcp_timeout"
    finally:
        source.close()


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"a__b": {"command": "x"}},
        {"s": {"command": "x", "url": "http://h"}},
        {"s": {}},
        {"s": {"command": "x", "args": "no"}},
        {"s": {"url": "ftp://h"}},
        {"s": {"command": "x", "timeout": 0}},
        {"s": {"command": "x", "surprise": 1}},
        {"s": {"command": "x", "trusted": "yes"}},
    ],
)
def test_bad_server_settings_are_refused(bad: Any) -> None:
    with pytest.raises(SettingsError):
        parse_servers("mcp.servers", bad)


def test_a_good_setting_parses() -> None:
    specs = parse_servers("mcp.servers", {"a": {"command": "x", "args": ["1"], "env": {"K": "v"}},
                                          "b": {"url": "https://h/mcp", "timeout": 5}})
    assert specs == (
        ServerSpec("a", command="x", args=("1",), env={"K": "v"}),
        ServerSpec("b", url="https://h/mcp", timeout=5.0),
    )


def test_preflight_counts_only_the_advertised_schemas(tmp_path: Path) -> None:
    # 250 filler schemas alone exceed the window's hard ceiling: counted in full, the first
    # message could not fit even a fresh window (R16 would reject it before any provider
    # call); deferred, only what is advertised is counted and the send goes out.
    from segue import count_request
    from segue._tools.base import ToolRegistry

    env = _setup(tmp_path, [DONE], fillers=250)
    source = McpTools(parse_servers("mcp.servers", {"toy": _spec(env["markers"], 250)}),
                      workdir=tmp_path)
    registry = ToolRegistry()
    registry.add_source(source)
    try:
        every = registry.advertised(lambda _n: True)
    finally:
        registry.close()
    assert count_request("", (), every, "openai:gpt-4o").tokens > 64000 - 8192
    out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "go")
    assert out.returncode == 0, out.stderr
    sent = _requests(env["log"])[0]
    assert "tool_search" in _tool_names(sent)
    assert not any(name.startswith("mcp__") for name in _tool_names(sent))


def test_a_url_server_over_streamable_http(tmp_path: Path) -> None:
    import subprocess

    from tests.mcp.helpers import subprocess_env

    markers = tmp_path / "http-markers"
    markers.mkdir()
    server = subprocess.Popen(
        [sys.executable, TOY, str(markers), "0", "http"],
        stdout=subprocess.PIPE, text=True, env=subprocess_env(tmp_path),
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())  # the server is listening once it prints
        env = _setup(tmp_path, [_call("mcp__web__echo", {"text": "over http"}), DONE],
                     servers={"web": {"url": f"http://127.0.0.1:{port}/mcp", "trusted": True}})
        out = run_segue(env["home"], tmp_path, "run", "-m", env["model"], "go")
        assert out.returncode == 0, out.stderr
        assert _outputs(env["home"]) == [{"ok": True, "content": "echo: over http"}]
    finally:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()
