"""The contract suite goes through the front door only: it imports ``segue`` and
``segue.api`` (and the framework integrations' own public modules), so moving a module
inside segue cannot break it unless behaviour changed."""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent
ALLOWED = {"segue", "segue.api", "segue.integrations.pydantic_ai",
           "segue.integrations.openai_agents"}


def _segue_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return {name for name in found if name.split(".")[0] == "segue"}


def test_the_contract_suite_imports_only_the_public_api() -> None:
    files = sorted(HERE.glob("*.py"))
    used = {path.name: _segue_imports(path) for path in files}
    assert sum(map(len, used.values())) >= 4  # it did read the suite's imports
    assert {name: sorted(mods - ALLOWED) for name, mods in used.items() if mods - ALLOWED} \
        == {}
