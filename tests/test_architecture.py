"""The shape of the house (STYLE.md, README "Architecture"): every package of ``src/segue``
sits in one layer of :data:`LAYERS`, and the import graph computed from the source has no
package circle and no import from a layer to one above it. Imports inside functions count;
only ``if TYPE_CHECKING:`` blocks (never run) do not. A failure names the edge and the
modules that make it, so an upward import fails here before it spreads."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "segue"

#: The layer map, bottom first. A package may import its own layer's packages (without a
#: circle) and any layer below; never one above. A top-level module (``settings.py``) is a
#: package of one module here.
LAYERS: list[tuple[str, frozenset[str]]] = [
    ("foundation", frozenset({
        "_errors", "_version", "_lazy", "_extras", "_messages", "_events", "_workspace", "_fsutil",
        "_keyspec"})),
    ("pure logic", frozenset({
        "_context", "_tokens", "_views", "_policy", "_memory", "_workspaces", "_children",
    })),
    ("models", frozenset({"_providers", "plugins"})),
    ("store", frozenset({"_history", "_importers"})),
    ("index", frozenset({"_retrieval"})),
    ("postgres", frozenset({"postgres"})),
    ("store choice", frozenset({"_stores"})),
    ("tools", frozenset({"_tools", "_mcp"})),
    ("settings", frozenset({"_settings"})),
    ("engine", frozenset({"_session"})),
    ("front doors", frozenset({"api", "integrations", "_demo"})),
    ("interfaces", frozenset({"_render", "_chat", "_tui"})),
    ("command line", frozenset({"_cli", "__main__"})),
]

#: Edges the map does not allow yet, each with why it is still here. Each must still exist
#: (a removed one fails :func:`test_known_violations_are_still_there`, so the list shrinks
#: with the code); any edge not listed must follow the map.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


def _type_checking_lines(tree: ast.AST) -> set[int]:
    return {
        inner.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
        if isinstance(inner, ast.stmt)
    }


def _imported(path: Path) -> set[str]:
    """The ``segue...`` modules ``path`` imports at run time (anywhere in the file)."""
    return _imports_in(path.read_text(encoding="utf-8"), _module_name(path),
                       package=path.name == "__init__.py")


def _imports_in(source: str, module: str, *, package: bool = False) -> set[str]:
    """The ``segue...`` modules that ``source``, the text of ``module`` (a package's
    ``__init__`` when ``package``), imports at run time."""
    tree = ast.parse(source)
    hidden = _type_checking_lines(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in hidden:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                keep = len(parts) - node.level + package
                base = ".".join(parts[:keep])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            if target == "segue" or not node.module:  # ``from segue import x``, ``from . import x``
                found.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "segue" or name.startswith("segue.")}


def _package(name: str) -> str | None:
    """The package of ``segue.X...`` (None for the root ``segue`` and unknown names)."""
    parts = name.split(".")
    if len(parts) < 2:
        return None
    first = parts[1]
    return first if (SRC / first).is_dir() or (SRC / f"{first}.py").is_file() else None


@functools.cache
def package_edges() -> dict[tuple[str, str], set[str]]:
    """``(importer, imported) -> {"module -> module", ...}`` between packages of segue."""
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        source = _package(module)
        if source is None:
            continue  # the root package re-exports the front door; it sits above everything
        for name in _imported(path):
            if name == "segue":
                edges[(source, "segue")].add(f"{module} -> segue")
                continue
            target = _package(name)
            if target is not None and target != source:
                edges[(source, target)].add(f"{module} -> {name}")
    return edges


def _layer_of() -> dict[str, int]:
    out: dict[str, int] = {}
    for n, (_, packages) in enumerate(LAYERS):
        for package in packages:
            assert package not in out, f"{package} is placed twice in LAYERS"
            out[package] = n
    return out


def _packages() -> set[str]:
    found = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    found |= {p.stem for p in SRC.glob("*.py") if p.name != "__init__.py"}
    return found


def _circles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _where(edges: dict[tuple[str, str], set[str]], edge: tuple[str, str]) -> str:
    made_by = sorted(edges[edge])
    more = f" (+{len(made_by) - 3} more)" if len(made_by) > 3 else ""
    return f"{edge[0]} -> {edge[1]}: " + "; ".join(made_by[:3]) + more


def test_every_package_is_placed_once() -> None:
    placed = _layer_of()
    assert sorted(_packages() - set(placed)) == [], "place these packages in LAYERS"
    assert sorted(set(placed) - _packages()) == [], "these packages are gone: update LAYERS"


def test_no_import_goes_up_a_layer() -> None:
    layer = _layer_of()
    edges = package_edges()
    upward = [
        _where(edges, (a, b))
        for a, b in sorted(edges)
        if (a, b) not in KNOWN_VIOLATIONS
        and (b == "segue" or layer.get(b, -1) > layer.get(a, len(LAYERS)))
    ]
    assert upward == []


def test_no_package_circle() -> None:
    edges = package_edges()
    allowed = {edge for edge in edges if edge not in KNOWN_VIOLATIONS}
    circles = _circles(allowed)
    assert circles == [], [
        " ⇄ ".join(c) + ": " + " | ".join(
            _where(edges, (a, b)) for a in c for b in c if (a, b) in allowed)
        for c in circles
    ]


def test_known_violations_are_still_there() -> None:
    """An entry whose edge is gone must be removed, so the list cannot hide a new one."""
    layer = _layer_of()
    edges = package_edges()
    gone = [edge for edge in KNOWN_VIOLATIONS if edge not in edges]
    assert gone == [], "remove these from KNOWN_VIOLATIONS"
    assert [edge for edge in KNOWN_VIOLATIONS if layer[edge[1]] <= layer[edge[0]]] == []


def test_the_checker_sees_what_it_must() -> None:
    """The graph is read the way the rule means: a lazy import inside a function is an edge,
    a ``TYPE_CHECKING`` one is not, a relative import resolves, and an upward or circular
    edge is found (checked on source written here, not on the tree as it happens to be)."""
    import textwrap

    source = textwrap.dedent("""
        from typing import TYPE_CHECKING
        import segue._errors
        from . import wrap
        from .._views import export
        from segue import _tokens as tokens
        if TYPE_CHECKING:
            from segue._cli.main import cli
        def later():
            from segue._session import Session
    """)
    found = _imports_in(source, "segue._chat.loop")
    assert {"segue._errors", "segue._chat.wrap", "segue._views", "segue._tokens",
            "segue._session"} <= found
    assert not any(name.startswith("segue._cli") for name in found)
    assert _imports_in("from .lines import Line\n", "segue._render", package=True) == {
        "segue._render.lines"}
    assert _imported(SRC / "_chat" / "loop.py") >= {"segue._session", "segue._render.terminal"}
    assert "segue._settings" in _imported(SRC / "_session" / "factory.py")
    assert _circles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]
    assert _circles({("a", "b"), ("b", "c")}) == []
    edges = package_edges()
    assert ("_cli", "_session") in edges and ("_providers", "_settings") not in edges
    assert len(edges) > 100


#: Pure modules inside packages that also do I/O: finer than the layers, they import none of
#: the I/O layers (a module may use helpers of its own package).
PURE = [
    "_messages.py",
    "_errors.py",
    "_workspace.py",
    "_events.py",
    "_context",
    "_policy/rules.py",
    "_policy/agents.py",
    "_policy/frontmatter.py",
    "_memory/hot.py",
    "_tokens/registry.py",
    "_tokens/chunking.py",
    "_tools/bounds.py",
    "_tools/editing.py",
    "_tools/globs.py",
    "_chat/commands.py",
    "_chat/meter.py",
]
IO_LAYERS = (
    "segue._history",
    "segue._providers",
    "segue._tools",
    "segue._session",
    "segue._retrieval",
    "segue._cli",
    "segue._chat",
    "segue._demo",
    "segue._memory.store",
    "segue._settings",
    "segue.plugins",
)


def _modules(entry: str) -> list[Path]:
    path = SRC / entry
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


@pytest.mark.parametrize("entry", PURE)
def test_pure_modules_do_not_import_io_layers(entry: str) -> None:
    modules = _modules(entry)
    assert modules, f"{entry} does not exist any more: update this list"
    for module in modules:
        parts = module.relative_to(SRC).with_suffix("").parts
        # A module may use helpers of its own package (tools/editing.py → tools/base.py).
        own_package = f"segue.{parts[0]}." if len(parts) > 1 else None
        upward = {
            name
            for name in _imported(module)
            if any(name == layer or name.startswith(layer + ".") for layer in IO_LAYERS)
            and not (own_package and name.startswith(own_package))
        }
        assert not upward, f"{module.relative_to(SRC)} imports {sorted(upward)}"


def test_modules_stay_small() -> None:
    """One idea per module: split before 600 lines (STYLE.md)."""
    big = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 600
    }
    assert not big, big


def test_every_install_hint_installs_this_project() -> None:
    """``pip install NAME`` in a message must name segue's own extra (a bare name could be a
    stranger's package): only ``pip install -e '.[X]'`` and ``pip install 'segue[X]'``."""
    import re

    from segue._extras import install_hint

    assert install_hint("openai") == (
        "install segue with its 'openai' extra — from a checkout: pip install -e '.[openai]'; "
        "from a release: pip install 'segue[openai]'"
    )
    allowed = re.compile(r"pip install (-e '\.\[[\w,{}-]+\]'|'segue\[[\w,{}-]+\]')")
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in re.finditer(r"pip install [^\s`\"]+(?: [^\s`\"]+)?", line):
                if not allowed.match(line, m.start()):
                    offenders.append(f"{path.relative_to(SRC)}:{n}: {m.group(0)}")
    assert offenders == []


def test_the_engine_never_imports_the_library_front_door() -> None:
    """``segue.api`` is an edge, like the command line: it builds on the engine, and nothing
    below it imports it (only the package's ``__init__`` re-exports its names)."""
    offenders = [
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if path.parent.name != "api" and path != SRC / "__init__.py"
        and any(name == "segue.api" or name.startswith("segue.api.") for name in _imported(path))
    ]
    assert offenders == []


#: The public surface (README "Library"): the root package, the library's front door, the
#: plugin API, the PostgreSQL store and the two framework integrations. Every other module is
#: an implementation detail and says so with a leading underscore in its path, as httpx does.
PUBLIC = {
    "segue",
    "segue.__main__",
    "segue.api",
    "segue.plugins",
    "segue.postgres",
    "segue.integrations",
    "segue.integrations.openai_agents",
    "segue.integrations.pydantic_ai",
}


def test_implementation_modules_are_private() -> None:
    names = {_module_name(path) for path in SRC.rglob("*.py")}
    assert names >= PUBLIC, sorted(PUBLIC - names)
    public = sorted(
        name for name in names - PUBLIC
        if not any(part.startswith("_") for part in name.split(".")[1:])
    )
    assert public == [], "make these private (a leading underscore) or add them to PUBLIC"


@pytest.mark.parametrize("name", sorted(PUBLIC - {"segue.__main__"}))
def test_every_public_module_pins_its_names(name: str) -> None:
    """``__all__`` lists exactly what a public module offers, and every listed name loads."""
    import importlib

    module = importlib.import_module(name)
    listed = getattr(module, "__all__", None)
    assert isinstance(listed, (list, tuple)), f"{name} has no __all__"
    if name != "segue.integrations":  # a folder of public modules, nothing of its own
        assert listed, f"{name}.__all__ is empty"
    assert len(set(listed)) == len(listed), f"{name}.__all__ repeats a name"
    missing = [item for item in listed if not hasattr(module, item)]
    assert missing == [], f"{name}.__all__ names what it does not have"
