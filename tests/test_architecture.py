"""Data flows one way: pure modules never import the I/O layers (STYLE.md, "The shape of the
house"). Checked from the source, so an upward import fails here before it spreads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "segue"

PURE = [
    "messages.py",
    "errors.py",
    "workspace.py",
    "events.py",
    "context",
    "policy/rules.py",
    "policy/agents.py",
    "policy/frontmatter.py",
    "memory/hot.py",
    "tokens/registry.py",
    "tokens/chunking.py",
    "tools/bounds.py",
    "tools/editing.py",
    "tools/globs.py",
    "chat/commands.py",
    "chat/meter.py",
]
IO_LAYERS = (
    "segue.history",
    "segue.providers",
    "segue.tools",
    "segue.session",
    "segue.retrieval",
    "segue.cli",
    "segue.chat",
    "segue.demo",
    "segue.memory.store",
    "segue.settings",
    "segue.plugins",
)


def _modules(entry: str) -> list[Path]:
    path = SRC / entry
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


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
            for name in _imports(module)
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

    from segue.extras import install_hint

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
        and any(name == "segue.api" or name.startswith("segue.api.") for name in _imports(path))
    ]
    assert offenders == []
