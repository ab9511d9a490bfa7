"""The plugin registry on its own: ordering, scoping, sandboxing, lazy loading, disposal and
the mutation epoch (R31, R32). No session, no disk."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from segue import ProviderRequest, make_row
from segue._errors import PluginError, RolloverBlocked
from segue.plugins import (
    AdapterContext,
    Append,
    HookKind,
    LazyPlugin,
    PluginHandle,
    PluginRegistry,
    Replace,
    RequestContext,
)
from segue.plugins._hooks import Middleware
from segue.plugins._registry import Setup

REQUEST = ProviderRequest("base", (make_row("user", "hi", id="u1"),), ({"name": "echo"},))
CONTEXT = RequestContext("ws", "scripted:test", "w:0")


def line_adder(text: str) -> Middleware:
    def middleware(request: ProviderRequest) -> ProviderRequest:
        return replace(request, system=f"{request.system}\n{text}")

    return middleware


def test_hooks_run_in_registration_order_across_plugins_and_scopes() -> None:
    registry = PluginRegistry()
    a = registry.plugin("a")
    b = registry.plugin("b")
    a.add_middleware(line_adder("1"))
    b.add_adapter(lambda ctx: Append("2"), workspace="ws")
    a.add_middleware(line_adder("3"))
    b.add_adapter(lambda ctx: Append("4"))
    out = registry.apply(REQUEST, CONTEXT)
    assert out.system == "base\n1\n\n2\n3\n\n4"
    assert [r.order for r in registry.snapshot("ws").registrations] == [0, 1, 2, 3]


def test_scoped_hooks_apply_only_to_their_workspace() -> None:
    registry = PluginRegistry()
    registry.plugin("global").add_adapter(lambda ctx: Append("G"))
    registry.plugin("mine").add_adapter(lambda ctx: Append("MINE"), workspace="ws")
    registry.plugin("theirs").add_middleware(line_adder("THEIRS"), workspace="other")
    assert [r.plugin for r in registry.snapshot("ws").registrations] == ["global", "mine"]
    assert [r.plugin for r in registry.snapshot("other").registrations] == ["global", "theirs"]
    assert registry.apply(REQUEST, CONTEXT).system == "base\n\nG\n\nMINE"


def test_a_scoped_plugin_cannot_register_for_another_scope() -> None:
    registry = PluginRegistry()
    handle = registry.plugin("p", workspace="ws")
    registration = handle.add_adapter(lambda ctx: None)
    assert registration.workspace == "ws"  # the plugin's scope is the default
    with pytest.raises(PluginError, match="scoped to workspace 'ws'"):
        handle.add_adapter(lambda ctx: None, workspace="other")
    with pytest.raises(PluginError, match="cannot change"):
        registry.plugin("p")  # the same name with other properties


def test_a_sandboxed_plugin_cannot_register_unrestricted_middleware() -> None:
    registry = PluginRegistry()
    handle = registry.plugin("boxed", sandboxed=True)
    with pytest.raises(PluginError, match="only register context-only adapters"):
        handle.add_middleware(line_adder("x"))
    assert registry.registrations() == ()
    adapter = handle.add_adapter(lambda ctx: Append("ok"))
    assert adapter.kind is HookKind.ADAPTER and adapter.sandboxed


def test_adapter_sees_only_system_text_and_read_only_context() -> None:
    seen: list[object] = []

    def adapter(ctx: AdapterContext) -> Replace:
        seen.append(ctx)
        return Replace(f"{ctx.system} for {ctx.workspace_id} on {ctx.model} in {ctx.window_id}")

    registry = PluginRegistry()
    registry.plugin("p", sandboxed=True).add_adapter(adapter)
    out = registry.apply(REQUEST, CONTEXT)
    assert seen == [AdapterContext("ws", "scripted:test", "w:0", "base")]
    assert out.system == "base for ws on scripted:test in w:0"
    assert out.rows == REQUEST.rows and out.tools == REQUEST.tools


def test_bad_hook_results_are_errors_not_coerced() -> None:
    registry = PluginRegistry()
    registry.plugin("adapter").add_adapter(lambda ctx: "plain text")  # type: ignore[arg-type,return-value]
    with pytest.raises(PluginError, match="may only return Append"):
        registry.apply(REQUEST, CONTEXT)
    other = PluginRegistry()
    other.plugin("mw").add_middleware(lambda request: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(PluginError, match="not a ProviderRequest"):
        other.apply(REQUEST, CONTEXT)


def test_epoch_moves_on_every_register_unregister_and_dispose() -> None:
    registry = PluginRegistry()
    assert registry.epoch == 0
    handle = registry.plugin("p")
    assert registry.epoch == 0  # declaring a plugin registers nothing
    first = handle.add_adapter(lambda ctx: None)
    handle.add_adapter(lambda ctx: None)
    assert registry.epoch == 2
    snapshot = registry.snapshot("ws")
    assert not registry.changed_since(snapshot)
    handle.unregister(first)
    assert registry.epoch == 3 and registry.changed_since(snapshot)
    with pytest.raises(PluginError, match="not registered"):
        handle.unregister(first)
    assert registry.epoch == 3
    handle.dispose()
    assert registry.epoch == 4
    assert registry.registrations() == ()


def test_snapshot_is_immutable_but_disposal_revokes_live() -> None:
    registry = PluginRegistry()
    keep = registry.plugin("keep")
    gone = registry.plugin("gone")
    registration = keep.add_adapter(lambda ctx: Append("K"))
    gone.add_adapter(lambda ctx: Append("D"))
    snapshot = registry.admit("ws")
    # Later registrations and unregistrations do not touch the snapshot...
    keep.unregister(registration)
    keep.add_adapter(lambda ctx: Append("LATE"))
    assert registry.apply(REQUEST, CONTEXT, snapshot).system == "base\n\nK\n\nD"
    # ...but disposal is checked at each hook run, also for a snapshot taken before it.
    gone.dispose()
    assert registry.apply(REQUEST, CONTEXT, snapshot).system == "base\n\nK"
    assert registry.apply(REQUEST, CONTEXT).system == "base\n\nLATE"
    with pytest.raises(PluginError, match="was disposed"):
        gone.add_adapter(lambda ctx: None)


def test_admission_blocks_on_any_applicable_unrestricted_middleware() -> None:
    registry = PluginRegistry()
    registry.plugin("adapters", sandboxed=True).add_adapter(lambda ctx: None)
    registry.plugin("elsewhere").add_middleware(lambda r: r, workspace="other")
    assert [r.plugin for r in registry.admit("ws").registrations] == ["adapters"]
    registry.plugin("noop").add_middleware(lambda r: r)  # changes nothing, still blocks
    with pytest.raises(RolloverBlocked, match="noop"):
        registry.admit("ws")


def recording_setup(calls: list[str], text: str) -> Setup:
    def setup(handle: PluginHandle) -> None:
        calls.append(handle.name)
        handle.add_adapter(lambda ctx: Append(text))

    return setup


def test_lazy_plugins_load_on_first_use_of_a_workspace_they_apply_to() -> None:
    loads: list[str] = []
    calls: list[str] = []

    def loader(name: str, text: str) -> Callable[[], Setup]:
        def load() -> Setup:
            loads.append(name)
            return recording_setup(calls, text)

        return load

    registry = PluginRegistry.lazy(
        [
            LazyPlugin("everywhere", loader("everywhere", "E")),
            LazyPlugin("only-ws", loader("only-ws", "W"), workspace="ws"),
            LazyPlugin("only-other", loader("only-other", "O"), workspace="other"),
        ]
    )
    assert loads == [] and registry.epoch == 0  # building it loads nothing
    assert registry.apply(REQUEST, CONTEXT).system == "base\n\nE\n\nW"
    assert loads == ["everywhere", "only-ws"]
    assert registry.pending() == ("only-other",)
    registry.apply(REQUEST, CONTEXT)
    assert loads == ["everywhere", "only-ws"]  # loaded once
    # A lazy plugin's scope binds its registrations.
    (scoped,) = [r for r in registry.registrations() if r.plugin == "only-ws"]
    assert scoped.workspace == "ws"


def test_a_failing_setup_leaves_nothing_and_fails_again_next_time() -> None:
    attempts: list[int] = []

    def setup(handle: PluginHandle) -> None:
        attempts.append(1)
        handle.add_adapter(lambda ctx: Append("half"))
        raise RuntimeError("boom")

    registry = PluginRegistry.lazy([LazyPlugin("broken", lambda: setup)])
    for expected in (1, 2):
        with pytest.raises(PluginError, match=r"broken.*failed to load.*boom"):
            registry.apply(REQUEST, CONTEXT)
        assert len(attempts) == expected
        assert registry.registrations() == ()
        assert registry.pending() == ("broken",)


def test_a_lazy_sandboxed_plugin_is_refused_middleware_at_load() -> None:
    def setup(handle: PluginHandle) -> None:
        handle.add_middleware(line_adder("sneaky"))

    registry = PluginRegistry.lazy([LazyPlugin("boxed", lambda: setup, sandboxed=True)])
    with pytest.raises(PluginError, match="only register context-only adapters"):
        registry.apply(REQUEST, CONTEXT)
    assert registry.registrations() == ()


def test_disposing_a_pending_lazy_plugin_means_it_never_loads() -> None:
    loads: list[int] = []

    def load() -> Setup:
        loads.append(1)
        return lambda handle: None

    registry = PluginRegistry.lazy([LazyPlugin("later", load)])
    registry.dispose("later")
    assert registry.apply(REQUEST, CONTEXT) == REQUEST
    assert loads == [] and registry.pending() == ()
    with pytest.raises(PluginError, match="configured twice"):
        registry.add_lazy(LazyPlugin("later", load))


def test_an_appending_adapter_keeps_the_prompt_a_block_of_its_own() -> None:
    from segue._providers.anthropic_messages import system_blocks
    from segue._providers.request import SystemText

    registry = PluginRegistry()
    registry.plugin("notes").add_adapter(lambda ctx: Append("NOTE"))
    two_blocks = replace(REQUEST, system=SystemText("PROMPT\n\nMEMORY", len("PROMPT")))
    out = registry.apply(two_blocks, CONTEXT).system
    assert out == "PROMPT\n\nMEMORY\n\nNOTE"
    assert [b["text"] for b in system_blocks(out)] == ["PROMPT", "\n\nMEMORY\n\nNOTE"]
    prompt_only = replace(REQUEST, system=SystemText("PROMPT", len("PROMPT")))
    out = registry.apply(prompt_only, CONTEXT).system
    assert [b["text"] for b in system_blocks(out)] == ["PROMPT", "\n\nNOTE"]
    assert [b["text"] for b in system_blocks(registry.apply(REQUEST, CONTEXT).system)] == [
        "base\n\nNOTE"
    ]
