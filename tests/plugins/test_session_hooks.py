"""Plugin hooks through the real turn loop (R31, R32): real store, scripted provider and its
requestLog. Rollovers are on send (a primed window of ~4,000 tokens, threshold 50 on an
8,000-token model: trigger 4,400, hard ceiling 6,000)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from segue import Event, ProviderRequest, RolledOver, Session, make_row
from segue._tools.carryover_file import carryover_path
from segue.plugins import AdapterContext, Append, PluginRegistry
from tests.front import CONTINUATION_TYPE, is_rollover_boundary
from tests.session.helpers import Harness, echo, harness

WINDOW = 8000
THRESHOLD = 50
EDITED = "edited.txt"


def filler(word: str, n: int) -> str:
    return " ".join([word] * n)


def full_window(tmp: Path, responses: list[dict[str, Any]]) -> Harness:
    """A harness whose next send rolls over."""
    h = harness(tmp, responses, context_window=WINDOW)
    h.store.append(
        [
            make_row("user", filler("old", 2000), id="p0"),
            make_row("assistant", filler("reply", 2000), id="p1"),
        ]
    )
    return h


def with_plugins(h: Harness, registry: PluginRegistry, **kwargs: Any) -> Session:
    session = h.session(threshold=THRESHOLD, **kwargs)
    session.plugins = registry
    return session


def transcript_bytes(h: Harness) -> bytes:
    return b"".join(p.read_bytes() for p in (h.layout.archive, h.layout.chat) if p.exists())


def system_line(text: str, calls: list[str] | None = None) -> Callable[
    [ProviderRequest], ProviderRequest
]:
    """Unrestricted middleware adding one line to the system text."""

    def middleware(request: ProviderRequest) -> ProviderRequest:
        if calls is not None:
            calls.append(text)
        return replace(request, system=f"{request.system}\n{text}")

    return middleware


def test_a_no_op_unrestricted_middleware_blocks_the_rollover_before_any_cleanup(
    tmp_path: Path,
) -> None:
    h = full_window(tmp_path, [{"text": "never sent"}])
    calls: list[str] = []

    def noop(request: ProviderRequest) -> ProviderRequest:
        calls.append("ran")
        return request

    registry = PluginRegistry()
    registry.plugin("audit").add_middleware(noop)
    seen: list[str] = []
    session = with_plugins(h, registry, checkpoint=seen.append)
    session._context_cache["carried"] = "old window state"
    (h.workdir / EDITED).write_text("edited in the old window\n")
    session.carryover.record_edit(h.workdir, EDITED)
    transcript = transcript_bytes(h)
    carryover = carryover_path(h.layout).read_bytes()

    result = session.send("the new question")

    assert result.status == "paused"
    assert result.reason is not None
    assert "audit" in result.reason and "unrestricted" in result.reason
    assert transcript_bytes(h) == transcript  # byte-identical: not even the message
    assert carryover_path(h.layout).read_bytes() == carryover
    assert session._context_cache == {"carried": "old window state"}
    assert seen == []  # blocked before prepare, so long before cleanup
    assert calls == []  # blocked for being there, not for what it does
    assert h.requests() == []
    assert result.rollovers == 0


def test_middleware_scoped_to_another_workspace_does_not_block(tmp_path: Path) -> None:
    h = full_window(tmp_path, [{"text": "fresh answer"}])
    calls: list[str] = []
    registry = PluginRegistry()
    registry.plugin("elsewhere").add_middleware(system_line("ELSEWHERE", calls), workspace="x")
    registry.plugin("there", workspace="x").add_adapter(lambda ctx: Append("THERE"))

    result = with_plugins(h, registry).send("the new question")

    assert result.status == "completed" and result.rollovers == 1
    (request,) = h.requests()
    assert "ELSEWHERE" not in request.system and "THERE" not in request.system
    assert calls == []


def test_adapter_text_reaches_the_rollover_request_with_the_new_window_id(
    tmp_path: Path,
) -> None:
    h = full_window(tmp_path, [{"text": "fresh answer"}])
    seen: list[AdapterContext] = []

    def adapter(ctx: AdapterContext) -> Append:
        seen.append(ctx)
        return Append(f"Project note for {ctx.workspace_id} ({ctx.window_id}).")

    registry = PluginRegistry()
    registry.plugin("notes", sandboxed=True).add_adapter(adapter)

    result = with_plugins(h, registry).send("the new question")

    assert result.status == "completed" and result.rollovers == 1
    boundary = next(r for r in h.rows() if is_rollover_boundary(r))
    new_window = f"w:{boundary.sequence}"
    (request,) = h.requests()
    assert request.system.endswith(f"Project note for ws ({new_window}).")
    assert [r.mux_type for r in request.rows] == ["context-window-lead-in", CONTINUATION_TYPE]
    # Run once, at admission: the prepared request is sent as it is, not assembled again.
    assert [c.window_id for c in seen] == [new_window]


def test_adapter_text_is_counted_in_the_rollover_fit_check(tmp_path: Path) -> None:
    """Without the adapter this send rolls over (above); with 7,000 tokens of adapter text
    the candidate cannot fit, so admission fails and nothing changes."""
    h = full_window(tmp_path, [{"text": "never sent"}])
    registry = PluginRegistry()
    registry.plugin("verbose", sandboxed=True).add_adapter(
        lambda ctx: Append(filler("note", 7000))
    )
    transcript = transcript_bytes(h)

    result = with_plugins(h, registry).send("the new question")

    assert result.status == "paused"
    assert result.reason is not None and "would not fit" in result.reason
    assert transcript_bytes(h) == transcript
    assert h.requests() == []


class ChangeAfterAdmission:
    """A registry with a sandboxed adapter ("PINNED"); right after the first rollover is
    admitted (its RolledOver event), the adapter is unregistered and unrestricted middleware
    ("LATE", plugin "late") is registered, under the running turn."""

    def __init__(self) -> None:
        self.registry = PluginRegistry()
        self.pinned = self.registry.plugin("pinned", sandboxed=True)
        self.registration = self.pinned.add_adapter(lambda ctx: Append("PINNED"))
        self.rolled: list[RolledOver] = []

    def __call__(self, event: Event) -> None:
        if not isinstance(event, RolledOver):
            return
        self.rolled.append(event)
        if len(self.rolled) == 1:
            self.pinned.unregister(self.registration)
            self.registry.plugin("late").add_middleware(system_line("LATE"))


def test_registry_changes_after_admission_reach_the_next_admission_only(
    tmp_path: Path,
) -> None:
    h = full_window(
        tmp_path,
        [
            {"toolCalls": [echo("x", 1)]},
            {"text": "done", "usage": {"inputTokens": 5000, "outputTokens": 10}},
            {"text": "after the plugin was disposed"},
        ],
    )
    change = ChangeAfterAdmission()
    session = with_plugins(h, change.registry)
    session.on_event = change

    first = session.send("the new question")

    # Every request of the rollover turn ran the admission's snapshot: the unregistered
    # adapter still, the middleware registered after admission never.
    assert first.status == "completed", first.reason
    prepared, after_tool = h.requests()
    assert prepared.system.endswith("PINNED") and after_tool.system.endswith("PINNED")
    assert "LATE" not in prepared.system + after_tool.system

    # The next admission takes a new snapshot: the late middleware blocks it.
    before = transcript_bytes(h)
    second = session.send("next")  # the last step's usage puts it over the trigger
    assert second.status == "paused"
    assert second.reason is not None and "late" in second.reason
    assert transcript_bytes(h) == before
    assert len(h.requests()) == 2

    # Once disposed, it no longer applies; the unregistered adapter is gone too.
    change.registry.dispose("late")
    third = session.send("again")
    assert third.status == "completed" and third.rollovers == 1
    last = h.requests()[-1]
    assert "PINNED" not in last.system and "LATE" not in last.system


def test_the_backstop_retry_of_a_rollover_turn_reuses_its_snapshot(tmp_path: Path) -> None:
    """The provider rejects a request of the rollover turn as too large; the emergency
    rollover that retries it runs the admission's snapshot, so the middleware registered
    since neither blocks it nor runs."""
    h = full_window(
        tmp_path,
        [
            {"toolCalls": [echo("x", 1)]},
            {"error": {"kind": "context_overflow"}},
            {"text": "done"},
        ],
    )
    change = ChangeAfterAdmission()
    session = with_plugins(h, change.registry)
    session.on_event = change

    result = session.send("the new question")

    assert result.status == "completed", result.reason
    assert [e.reason for e in change.rolled] == ["on-send", "context-exceeded"]
    requests = h.requests()
    assert len(requests) == 3  # prepared, after the tool step (rejected), the retry
    assert all(r.system.endswith("PINNED") for r in requests)
    assert not any("LATE" in r.system for r in requests)


def test_disposal_revokes_the_pinned_snapshot_live(tmp_path: Path) -> None:
    h = full_window(tmp_path, [{"toolCalls": [echo("x", 1)]}, {"text": "done"}])
    registry = PluginRegistry()
    registry.plugin("notes", sandboxed=True).add_adapter(lambda ctx: Append("NOTES"))
    session = with_plugins(h, registry)

    def on_event(event: Event) -> None:
        if isinstance(event, RolledOver):
            registry.dispose("notes")

    session.on_event = on_event

    result = session.send("the new question")

    assert result.status == "completed" and result.rollovers == 1
    prepared, after_tool = h.requests()
    assert prepared.system.endswith("NOTES")  # prepared before the disposal, sent as is
    assert "NOTES" not in after_tool.system  # the turn's next request: revoked


def test_ordinary_requests_and_manual_compact_run_live_middleware(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"text": "one"}, {"text": "two"}, {"text": "Summary: we said one and two."}],
        context_window=WINDOW,
    )
    registry = PluginRegistry()
    registry.plugin("audit").add_middleware(system_line("AUDIT: on"))
    session = with_plugins(h, registry)

    assert session.send("first").status == "completed"

    def no_echo(request: ProviderRequest) -> ProviderRequest:
        return replace(request, tools=tuple(t for t in request.tools if t["name"] != "echo"))

    registry.plugin("trim").add_middleware(no_echo)  # live: applies from the next request
    assert session.send("second").status == "completed"
    session.compact()

    first, second, compaction = h.requests()
    assert first.system.endswith("\nAUDIT: on")
    assert "echo" in [t["name"] for t in first.tools]
    assert second.system.endswith("\nAUDIT: on")
    assert "echo" not in [t["name"] for t in second.tools]
    assert compaction.system.endswith("\nAUDIT: on")
