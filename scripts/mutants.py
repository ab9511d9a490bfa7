"""Re-run a round of mutants: each one is a single textual change to the code that a test must
notice. For every mutant the tree is copied to a temporary directory, the change is applied
there (never to the working tree), the tests named for it run against that copy, and the
mutant is reported ``killed`` (the tests failed) or ``SURVIVED`` (they passed).

    python3 scripts/mutants.py            # every mutant
    python3 scripts/mutants.py store-     # only those whose name starts with "store-"
    python3 scripts/mutants.py --baseline # also check that the named tests pass unmutated

Exit status: 0 when every mutant run was killed, 1 otherwise (2 on a mutant that no longer
applies: the code it names moved, so update its ``old`` text)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    why: str


SURVIVORS = "tests/history/test_survivors.py"

MUTANTS = (
    Mutant(
        "reader-backward-overlap",
        "src/segue/_retrieval/reader.py",
        "                    both = chunk + edge\n",
        "                    both = chunk\n",
        (f"{SURVIVORS}::test_the_backward_reader_sees_a_reset_key_across_its_chunk_edges",),
        "the backward reader drops the overlap at a 64 KiB chunk edge of an oversized line",
    ),
    Mutant(
        "reader-backward-reread-edge",
        "src/segue/_retrieval/reader.py",
        "BackState(min(pos + len(edge), line_end), line_end, marker)",
        "BackState(pos, line_end, marker)",
        (f"{SURVIVORS}::test_the_backward_reader_sees_a_reset_key_across_its_chunk_edges",),
        "a byte budget ending inside an oversized line does not re-read the edge",
    ),
    Mutant(
        "turn-second-emergency-rollover",
        "src/segue/_session/turn.py",
        "            or self.emergency_used\n",
        "",
        ("tests/context/test_emergency_once.py",),
        "a second emergency rollover in one turn",
    ),
    Mutant(
        "admission-fresh-window-fits",
        "src/segue/_session/admission.py",
        "        if not budget.fits(tokens):\n            raise TurnPaused(\n"
        '                f"a fresh context window would not fit',
        "        if False:\n            raise TurnPaused(\n"
        '                f"a fresh context window would not fit',
        ("tests/context/test_admission_fit.py",),
        "a fresh window that does not fit is admitted",
    ),
    Mutant(
        "store-sequence-floor",
        "src/segue/_history/store.py",
        "        floor = receipt.next_sequence if receipt is not None else "
        "sequence_floor(self.layout)\n        return max(floor, disk_next_sequence(self.layout))",
        "        return disk_next_sequence(self.layout)",
        (f"{SURVIVORS}::test_a_mismatched_receipt_keeps_the_recorded_sequence_floor",),
        "a receipt that does not match the files: the next sequence from disk only",
    ),
    Mutant(
        "envelope-16-kib",
        "src/segue/_retrieval/envelope.py",
        "MAX_RESULT = 16 * 1024",
        "MAX_RESULT = 32 * 1024",
        (f"{SURVIVORS}::test_a_result_never_exceeds_16_kib",),
        "the 16 KiB answer bound",
    ),
    Mutant(
        "index-schema-check",
        "src/segue/_retrieval/index_file.py",
        "    if meta.schema != schema_id():\n"
        '        raise IndexUnusable("index of another schema version")\n',
        "",
        (f"{SURVIVORS}::test_an_index_of_another_schema_version_is_not_trusted",),
        "the index schema-version check",
    ),
    Mutant(
        "index-chat-read-check",
        "src/segue/_retrieval/index_file.py",
        "    if meta.chat_read > snap.chat_size:\n"
        '        raise IndexUnusable("chat.jsonl is shorter than the index says")\n',
        "",
        (f"{SURVIVORS}::test_an_index_claiming_more_of_chat_than_it_holds_falls_back",),
        "an index claiming more bytes read than chat.jsonl holds",
    ),
    Mutant(
        "store-batch-fsync",
        "src/segue/_history/store.py",
        "                    write_all(fd, data)\n                    if self.durable:\n"
        "                        os.fsync(fd)\n",
        "                    write_all(fd, data)\n",
        (f"{SURVIVORS}::test_an_acknowledged_batch_is_fsynced",),
        "the fsync of an acknowledged batch",
    ),
    Mutant(
        "floor-clean-line-bytes",
        "src/segue/_retrieval/project.py",
        "is_floor_line(row, settled_marker(raw, row, line.marker))",
        "is_floor_line(row, line.marker)",
        ("tests/context/test_xum_floor_cases.py",),
        "a clean line judged by its bytes (a nested key makes a floor)",
    ),
    Mutant(
        "import-floor-erased",
        "src/segue/_history/batch.py",
        "        if is_floor_bytes(line) and not is_manual_reset(row):\n",
        "        if False:\n",
        ("tests/history/test_floor_writers.py::test_the_issue_s_two_lines_keep_their_floor_on_import",),
        "import re-encodes a duplicate-key floor without its reset key",
    ),
)

_IGNORE = shutil.ignore_patterns(".git", ".hypothesis", "__pycache__", ".mypy_cache",
                                 ".ruff_cache", ".pytest_cache", "*.egg-info", "bench")


def _copy(dest: Path) -> None:
    for name in ("src", "tests", "scripts"):
        shutil.copytree(ROOT / name, dest / name, ignore=_IGNORE)
    for name in ("pyproject.toml", "conftest.py", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)


def _pytest(tree: Path, tests: tuple[str, ...]) -> int:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
           "-W", "ignore::DeprecationWarning", *tests]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, check=False)
    return done.returncode


def run(mutant: Mutant, *, baseline: bool) -> str:
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        tree = Path(tmp)
        _copy(tree)
        if baseline and _pytest(tree, mutant.tests) != 0:
            return "BASELINE-FAILS"
        target = tree / mutant.path
        text = target.read_text()
        if text.count(mutant.old) != 1:
            return "STALE"
        target.write_text(text.replace(mutant.old, mutant.new))
        code = _pytest(tree, mutant.tests)
    return "killed" if code == 1 else ("SURVIVED" if code == 0 else f"ERROR(exit {code})")


def main(argv: list[str]) -> int:
    baseline = "--baseline" in argv
    prefixes = [a for a in argv if not a.startswith("--")]
    chosen = [m for m in MUTANTS if not prefixes or any(m.name.startswith(p) for p in prefixes)]
    results = []
    for m in chosen:
        verdict = run(m, baseline=baseline)
        results.append(verdict)
        print(f"{verdict:<10} {m.name:<32} {m.why}", flush=True)
    killed = results.count("killed")
    print(f"{killed}/{len(results)} killed")
    if "STALE" in results:
        return 2
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
