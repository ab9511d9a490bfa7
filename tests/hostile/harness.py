"""Black-box harness for the hostile-machine tests (issue: hostile disks and files).

Every command runs as a real ``segue`` process with a timeout (a hang fails the test), and
every outcome is checked the same way: the exit status, at most one ``segue: error:`` line
on stderr and no traceback, and the bytes of every file outside what the command may write
unchanged. The figures the suite reports (faults tried, commands run, tracebacks, hangs,
bytes changed outside, acknowledged batches lost) are tallied here and printed at the end
of the run by this folder's conftest.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WS = "ws"
TIMEOUT = 30.0
SRC = Path(__file__).resolve().parents[2] / "src"

FIGURES: Counter[str] = Counter()


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    code: int
    out: bytes
    err: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("segue: error:")]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(SRC) + os.pathsep + e.get("PYTHONPATH", "")
    e.pop("SEGUE_HOME", None)
    return e


def segue(
    home: Path,
    *args: str,
    prefix: tuple[str, ...] = (),
    stdin: bytes | None = None,
    timeout: float = TIMEOUT,
    ws: str = WS,
) -> Result:
    """Run ``segue --home HOME -w WS ARGS`` (``prefix`` runs it as another user)."""
    cmd = [*prefix, sys.executable, "-m", "segue", "--home", str(home), "-w", ws, *args]
    FIGURES["commands run"] += 1
    try:
        proc = subprocess.run(
            cmd, check=False, input=stdin or b"", capture_output=True, timeout=timeout, env=env()
        )
    except subprocess.TimeoutExpired:
        FIGURES["hangs"] += 1
        raise AssertionError(f"segue {' '.join(args)} hung (no exit in {timeout:g}s)") from None
    err = proc.stderr.decode("utf-8", "replace")
    if "Traceback (most recent call last)" in err:
        FIGURES["tracebacks"] += 1
    return Result(tuple(args), proc.returncode, proc.stdout, err)


def fault(name: str) -> None:
    """Count one fault tried (a distinct hostile condition × command)."""
    FIGURES["faults tried"] += 1
    del name


def ok(r: Result) -> Result:
    """Exit 0, no traceback, no error line (a note that the lock was not taken is allowed)."""
    assert "Traceback" not in r.err, r.err
    assert r.code == 0, (r.args, r.code, r.err)
    assert not r.error_lines, r.err
    return r


def one_error(r: Result, *, code: int = 1, contains: str | None = None) -> str:
    """A clean failure: the exit status, exactly one error line, no traceback."""
    assert "Traceback" not in r.err, r.err
    assert r.code == code, (r.args, r.code, r.err)
    lines = r.error_lines
    assert len(lines) == 1, r.err
    others = [line for line in r.err.splitlines() if line and not line.startswith("segue: note:")]
    assert others == lines, r.err  # nothing but the error line (and notes) on stderr
    if contains is not None:
        assert contains in lines[0], lines[0]
    return lines[0]


def clean(r: Result, *, codes: tuple[int, ...] = (0, 1)) -> Result:
    """No traceback, an expected status, and a failure explained by one error line unless
    the command printed a report of its own (``history verify`` says DAMAGED on stdout)."""
    assert "Traceback" not in r.err, r.err
    assert r.code in codes, (r.args, r.code, r.err)
    if r.code != 0 and not r.out:
        one_error(r, code=r.code)
    return r


# -- files on disk ---------------------------------------------------------------------------


def snapshot(root: Path, *, skip: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Everything under ``root``: kind, and bytes for regular files, target for links."""
    out: dict[str, Any] = {}
    skipped = tuple(str(p) for p in skip)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            if path.startswith(skipped) and any(
                path == s or path.startswith(s + os.sep) for s in skipped
            ):
                continue
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    out[path] = ("file", f.read())
            elif stat.S_ISLNK(st.st_mode):
                out[path] = ("link", os.readlink(path))
            else:
                out[path] = (stat.S_IFMT(st.st_mode), st.st_rdev)
    return out


def changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Paths created, removed or changed; counts the bytes that differ into FIGURES."""
    paths = sorted(set(before) | set(after))
    diff = [p for p in paths if before.get(p) != after.get(p)]
    for p in diff:
        a, b = before.get(p), after.get(p)
        if a and b and a[0] == b[0] == "file":
            FIGURES["bytes changed outside"] += max(len(a[1]), len(b[1]))
        elif a is not None and a[0] == "file":
            FIGURES["bytes changed outside"] += len(a[1])
        elif b is not None and b[0] == "file":
            FIGURES["bytes changed outside"] += len(b[1])
        else:
            FIGURES["bytes changed outside"] += 1
    return diff


# -- sessions --------------------------------------------------------------------------------


def row(i: int, text: str | None = None, **meta: Any) -> dict[str, Any]:
    return {
        "id": f"r{i}",
        "role": "user" if i % 2 == 0 else "assistant",
        "parts": [{"type": "text", "text": text if text is not None else f"message {i}"}],
        "metadata": {"timestamp": 1700000000000 + i, **meta},
    }


def reset_row(i: int) -> dict[str, Any]:
    return {
        "id": f"reset{i}",
        "role": "assistant",
        "parts": [],
        "metadata": {"timestamp": 1700000000000 + i, "contextBoundaryKind": "reset"},
    }


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def seed(home: Path, rows: list[dict[str, Any]], scratch: Path) -> None:
    """A session written by segue itself: ``segue history import``."""
    scratch.mkdir(parents=True, exist_ok=True)
    f = scratch / "seed.jsonl"
    f.write_bytes(jsonl(rows))
    ok(segue(home, "history", "import", str(f)))


def session(home: Path, ws: str = WS) -> Path:
    return home / "sessions" / ws


def exported_rows(home: Path) -> list[dict[str, Any]]:
    r = ok(segue(home, "history", "export", "--format", "json"))
    rows: list[dict[str, Any]] = json.loads(r.out)["rows"]
    return rows


READ_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("history", "windows"),
    ("history", "windows", "--json"),
    ("history", "items", "w:0"),
    ("history", "read", "0"),
    ("history", "search", "message"),
    ("history", "export", "--format", "md"),
    ("history", "export", "--format", "json"),
    ("history", "export", "--format", "html"),
    ("history", "verify"),
    ("history", "tool", '{"action":"list_windows"}'),
    ("history", "tool", '{"action":"search","query":"message"}'),
    ("settings", "show"),
    ("workspaces",),
    ("workspaces", "--json"),
)
