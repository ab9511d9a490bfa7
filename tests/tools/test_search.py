"""file_search: globs, literal and regex content search, skipped files, bounds."""

from __future__ import annotations

from segue._tools.globs import glob_matches
from segue._tools.paths import Workspace
from segue._tools.search import MAX_OUTPUT_BYTES, FileSearchTool


def _tree(ws: Workspace) -> None:
    files = {
        "README.md": "Hello World\n",
        "src/app.py": "import os\n\ndef main():\n    return os.getcwd()  # TODO\n",
        "src/util/helpers.py": "def helper():\n    pass  # todo later\n",
        "docs/guide.md": "See main() in app.py\n",
        ".git/config": "TODO inside git\n",
    }
    for rel, text in files.items():
        path = ws.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (ws.root / "src" / "blob.bin").write_bytes(b"TODO\x00\x01\x02")


def test_glob_lists_paths_in_order_skipping_git(ws: Workspace) -> None:
    _tree(ws)
    search = FileSearchTool(ws)
    assert search.run({"pattern": "*.py"})["files"] == ["src/app.py", "src/util/helpers.py"]
    assert search.run({"pattern": "src/*.py"})["files"] == ["src/app.py"]
    assert search.run({"pattern": "**/*.md"})["files"] == ["README.md", "docs/guide.md"]
    everything = search.run({})["files"]
    assert not any(p.startswith(".git/") for p in everything)
    assert search.run({"pattern": "*", "path": "docs"})["files"] == ["docs/guide.md"]


def test_content_search_literal_regex_and_case(ws: Workspace) -> None:
    _tree(ws)
    search = FileSearchTool(ws)
    hits = search.run({"query": "todo"})
    assert [(m["path"], m["line"]) for m in hits["matches"]] == [
        ("src/app.py", 4),
        ("src/util/helpers.py", 2),
    ]
    assert hits["skipped"] == {"binary": 1, "tooLarge": 0}
    sensitive = search.run({"query": "TODO", "case_sensitive": True})
    assert [m["path"] for m in sensitive["matches"]] == ["src/app.py"]
    regex = search.run({"query": r"def \w+\(\)", "regex": True, "pattern": "*.py"})
    assert [m["text"] for m in regex["matches"]] == ["def main():", "def helper():"]
    literal = search.run({"query": "main()"})
    assert [m["path"] for m in literal["matches"]] == ["docs/guide.md", "src/app.py"]
    bad = search.run({"query": "(", "regex": True})
    assert bad["error"]["code"] == "invalid_argument"


def test_results_are_bounded_and_say_so(ws: Workspace) -> None:
    (ws.root / "many.txt").write_text("needle " + "x" * 400 + "\n" * 1 + ("needle\n" * 999))
    search = FileSearchTool(ws)
    limited = search.run({"query": "needle", "limit": 10})
    assert len(limited["matches"]) == 10
    assert limited["truncated"] is True and "limit of 10 results" in limited["notice"]
    assert limited["matches"][0]["text"].endswith("…")
    assert len(limited["matches"][0]["text"].encode()) <= 304
    wide = search.run({"query": "needle", "limit": 500})
    assert wide["truncated"] is True
    assert len(str(wide["matches"]).encode()) <= MAX_OUTPUT_BYTES + 1024
    complete = search.run({"query": "needle", "path": "many.txt", "limit": 500})
    assert complete["scanned"]["files"] == 1
    for _ in range(20):
        (ws.root / f"f{_:02}.txt").write_text("")
    listed = search.run({"pattern": "f*.txt", "limit": 5})
    assert listed["files"] == [f"f{n:02}.txt" for n in range(5)] and listed["truncated"]


def test_glob_translation() -> None:
    assert glob_matches("*.py", "a/b/c.py") and not glob_matches("*.py", "a/b/c.pyc")
    assert glob_matches("a/**/b", "a/b") and glob_matches("a/**/b", "a/x/y/b")
    assert glob_matches("src/**", "src/x/y.ts") and not glob_matches("src/**", "lib/x.ts")
    assert glob_matches("*.{md,txt}", "notes.txt") and not glob_matches("*.{md,txt}", "n.rs")
    assert glob_matches("[!_]*.py", "a.py") and not glob_matches("[!_]*.py", "_a.py")
    assert glob_matches("./PLAN.md", "PLAN.md") and not glob_matches("./PLAN.md", "x/PLAN.md")
    assert not glob_matches("src/*.py", "src/sub/a.py")
