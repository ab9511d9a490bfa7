"""Every shell command in the README's code blocks, run as written.

The commands run in document order, as a reader following the README from a fresh clone
would run them: real processes (``bash -c`` with the line exactly as printed), one temporary
home (``HOME``, so ``~/.segue`` is the default SEGUE_HOME), one working directory holding a
copy of the checkout's files the README names, and the files a reader is assumed to have
(``err.log``, a Xum home, another agent's sessions). ``export`` lines carry
over to the later commands, as in a shell. Each command must exit 0, or the status listed in
:data:`EXPECTED_STATUS`.

What cannot run offline or inside a test is in :data:`SKIPPED`, with the reason; the list is
checked to be small and current (every entry names a command the README still has), and a
command that is neither run nor skipped cannot exist. Two placeholders the README itself
marks as examples are filled in (:data:`PLACEHOLDERS`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SAMPLES = Path(__file__).resolve().parent

#: The first word of a line that is a shell command (after ``NAME=value`` prefixes).
SHELL_WORDS = frozenset(
    {"segue", "python", "python3", "pip", "git", "cat", "echo", "printf", "export", "bash",
     "claude", "eval"}
)
SHELL_FENCES = frozenset({"bash", "sh", "shell", "console"})

#: Commands that cannot run offline or in a test, by their text before the comment.
SKIPPED: dict[str, str] = {
    "python3 -m pip install -e . && segue demo": "installs the package from PyPI into the "
    "test's own environment (the demo itself runs below, as `segue demo --keep`)",
    "bash scripts/check": "the test suite itself",
    "SEGUE_TEST_SCALE=large bash scripts/check": "the test suite itself, heavier",
    "bash scripts/check --quick": "the test suite itself (tests/test_check_script.py checks "
    "what it runs)",
    "bash scripts/check --quick tests/cli/test_run_cli.py": "the test suite itself",
    "python3 -m bench.run": "every benchmark: minutes of timing runs",
    "python3 -m bench.run store tokens": "timing runs, whose ratios a loaded test run skews",
    "SEGUE_BENCH_SCALE=large python3 -m bench.run": "hours of timing runs",
    "pip install -e '.[tui]'": "installs from PyPI",
    "pip install -e '.[openai]'": "installs from PyPI",
    "pip install 'segue[postgres]'": "installs from PyPI",
    "pip install 'segue[openai-agents]'": "installs from PyPI",
    "pip install 'segue[pydantic-ai]'": "installs from PyPI",
    "segue chat --tui": "full-screen: needs a terminal (tests/tui drive it with a pilot)",
    'segue run -m openai:gpt-4o "Summarize README.md"': "calls OpenAI",
    'segue run -m anthropic:claude-sonnet-4-5 "…"': "calls Anthropic",
    'segue run -m openai-compatible:qwen2.5-coder:7b "…"': "needs a server on localhost:11434",
    "claude mcp add segue -- segue mcp serve -w my-project": "needs Claude Code installed",
    "SEGUE_SNAPSHOT_UPDATE=1 python3 -m pytest -q tests/tui/test_snapshots.py": "rewrites the "
    "full-screen chat's stored baselines (tests/tui compares against them)",
    'eval "$(_SEGUE_COMPLETE=zsh_source segue)"': "zsh's script, for zsh (its compdef is not "
    "bash's; tests/cli/test_help_and_completion.py checks the script is produced)",
}
#: Kept small on purpose: a command a test cannot run is a command nobody checks.
MAX_SKIPPED = 20

#: The PostgreSQL section's commands, which run against the suite's own server
#: (tests/postgres/cluster.py) in :func:`test_the_postgresql_commands_run_against_the_suites_server`
#: rather than in the scene above (none of its hosts exists). The lines are examples of one
#: store each, so each runs as written in the state it presumes, with the section's example
#: URLs (``postgresql://me@db.example/segue``, ``postgresql://…``) and ``ID`` filled in.
POSTGRES_URL = "postgresql://me@db.example/segue"
POSTGRES_COMMANDS = (
    f"segue store init {POSTGRES_URL}",
    f"segue history migrate --to {POSTGRES_URL}",
    f'segue --store {POSTGRES_URL} run "…"',
    f"segue settings set store.url {POSTGRES_URL}",
    "segue --store postgresql://… history migrate -w ID --to ~/.segue",
)

#: Commands whose documented exit status is not 0 (none today).
EXPECTED_STATUS: dict[str, int] = {}

#: Example values the README marks as such, and what fills them in.
PLACEHOLDERS = {
    "/tmp/segue-demo-abc123": "the home `segue demo --keep` printed",
    "<id>": "the id of a session in the Xum home",
}
XUM_SESSION = "xum-session"
TIMEOUT_SECONDS = 180


@dataclass(frozen=True)
class Command:
    line: int  # 1-based, in README.md
    text: str  # exactly as printed (without a "$ " prompt)

    @property
    def key(self) -> str:
        """The command without its trailing comment (two spaces, then #)."""
        return re.split(r"\s{2,}#", self.text, maxsplit=1)[0].strip()


def _first_word(line: str) -> str:
    words = line.split()
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words = words[1:]
    return words[0] if words else ""


def readme_commands(text: str) -> list[Command]:
    """The shell commands of ``text``'s code blocks: every line of a ```bash / ```sh block
    (comment-only lines aside; an unknown first word is an error, so nothing is missed), the
    ``$ `` lines of an indented transcript, and the lines of other indented blocks that start
    with a shell command (such blocks also hold JSON, TOML and Python)."""
    lines = text.splitlines()
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"\s*```(\w*)", lines[i])
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            if fence.group(1) in SHELL_FENCES:
                for number in range(i + 1, end):
                    line = lines[number].strip()
                    if not line or line.startswith("#"):
                        continue
                    if _first_word(line) not in SHELL_WORDS:
                        raise AssertionError(f"README.md:{number + 1}: not a command segue's "
                                             f"README test knows: {line!r}")
                    commands.append(Command(number + 1, line))
            i = end + 1
            continue
        if lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            block = i
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                i += 1
            body = [(n + 1, lines[n][4:].rstrip()) for n in range(block, i)]
            transcript = any(line.startswith("$ ") for _, line in body)
            for number, line in body:
                if transcript:
                    if line.startswith("$ "):
                        commands.append(Command(number, line[2:]))
                elif line and _first_word(line) in SHELL_WORDS:
                    commands.append(Command(number, line))
            continue
        i += 1
    return commands


# -- the scene a reader works in -------------------------------------------------------------------


@dataclass
class Scene:
    work: Path  # the working directory: a copy of the checkout's files the README names
    home: Path  # HOME
    env: dict[str, str]


def _scene(tmp: Path) -> Scene:
    work, home, temp, bin_dir = (tmp / "checkout", tmp / "home", tmp / "tmp", tmp / "bin")
    for directory in (work, home, temp, bin_dir):
        directory.mkdir()
    for name in ("README.md", "pyproject.toml"):
        shutil.copy2(ROOT / name, work / name)
    for name in ("examples", "bench", "scripts"):
        shutil.copytree(ROOT / name, work / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # `segue` runs this checkout's code (an installed `segue` may be another checkout's).
    shim = bin_dir / "segue"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m segue "$@"\n')
    shim.chmod(0o755)
    # `python` is this interpreter, started by its own path: a symlink elsewhere to a venv's
    # python would start the base interpreter, without the venv's packages
    for name in ("python", "python3"):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        (bin_dir / name).chmod(0o755)
    src = str(ROOT / "src")
    env = {
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PYTHONPATH": os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])]),
        "TMPDIR": str(temp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        # A reader who set an OpenAI model as the default has a key; nothing here sends.
        "OPENAI_API_KEY": "sk-readme-test",
        # Nothing may reach the network: a request would fail at once at this dead proxy.
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
        "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig"),
        "GIT_AUTHOR_NAME": "reader", "GIT_AUTHOR_EMAIL": "reader@example.com",
        "GIT_COMMITTER_NAME": "reader", "GIT_COMMITTER_EMAIL": "reader@example.com",
    }
    _reader_files(work, home, env)
    return Scene(work, home, env)


def _reader_files(work: Path, home: Path, env: dict[str, str]) -> None:
    """What the README assumes a reader has: a git checkout with a change, an error log, notes,
    a Xum session file and home, Claude Code and Codex sessions, fish's completions folder
    (the prompt file the README runs ships in examples/)."""
    (home / ".config" / "fish" / "completions").mkdir(parents=True)
    (work / "err.log").write_text(
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    main()\n"
        "ZeroDivisionError: division by zero\n"
    )
    (work / "notes.md").write_text("# Notes\n\nThe release is on Friday.\n")
    shutil.copy2(SAMPLES / "data" / "xum" / "compaction.jsonl", work / "session.jsonl")
    xum = home / ".xum" / "sessions" / XUM_SESSION
    xum.mkdir(parents=True)
    shutil.copy2(SAMPLES / "data" / "xum" / "rollover.jsonl", xum / "chat.jsonl")
    claude = home / ".claude" / "projects" / "-home-me-my-project"
    claude.mkdir(parents=True)
    shutil.copy2(SAMPLES / "importers" / "samples" / "claude-code-session.jsonl",
                 claude / "5f0c1b2e-0000-4000-8000-000000000001.jsonl")
    codex = home / ".codex" / "sessions" / "2026" / "12" / "01"
    codex.mkdir(parents=True)
    shutil.copy2(SAMPLES / "importers" / "samples" / "codex-rollout.jsonl",
                 codex / "rollout-2026-12-01T10-00-00-0000.jsonl")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "a fresh clone"]):
        subprocess.run(["git", *args], cwd=work, env={**os.environ, **env}, check=True,
                       capture_output=True)
    with (work / "README.md").open("a") as readme:
        readme.write("\nA line the reader added.\n")


# -- running ---------------------------------------------------------------------------------------


def _fill(text: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def _exports(text: str) -> Iterator[tuple[str, str]]:
    words = shlex.split(text, comments=True)
    for word in words[1:]:
        name, sep, value = word.partition("=")
        if sep:
            yield name, value


def _run(scene: Scene, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", text], check=False, cwd=scene.work, env=scene.env,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
    )


def _failure(command: Command, proc: subprocess.CompletedProcess[str], expected: int) -> str:
    return (
        f"README.md:{command.line}: {command.text}\n  exit {proc.returncode} "
        f"(expected {expected})\n  stdout: {proc.stdout[-800:]!r}\n"
        f"  stderr: {proc.stderr[-800:]!r}"
    )


def test_every_readme_command_runs_as_written(tmp_path: Path) -> None:
    commands = readme_commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 40, "the README's commands were not found"
    scene = _scene(tmp_path)
    values = {"<id>": XUM_SESSION}
    failures: list[str] = []
    ran = 0
    for command in commands:
        if command.key in SKIPPED or command.key in POSTGRES_COMMANDS:
            continue
        text = _fill(command.text, values)
        proc = _run(scene, text)
        ran += 1
        expected = EXPECTED_STATUS.get(command.key, 0)
        if proc.returncode != expected or "Traceback (most recent call last)" in proc.stderr:
            failures.append(_failure(command, proc, expected))
        if command.key.startswith("export "):
            scene.env.update(_exports(command.text))
        kept = re.search(r"segue --home (\S+) -w demo history windows", proc.stdout)
        if command.key == "segue demo --keep" and kept:
            values["/tmp/segue-demo-abc123"] = kept.group(1)
    assert not failures, "README commands that do not work as written:\n" + "\n".join(failures)
    assert ran >= 30


def _postgres_line(scene: Scene, key: str, fills: dict[str, str]) -> None:
    """Run the README's line ``key`` as written, its examples filled in."""
    (command,) = [c for c in readme_commands(README.read_text(encoding="utf-8")) if c.key == key]
    proc = _run(scene, _fill(command.text, fills))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, _failure(command, proc, 0)


def _export(scene: Scene, *where: str) -> list[object]:
    proc = _run(scene, shlex.join(["segue", *where, "history", "export", "--format", "json"]))
    assert proc.returncode == 0, proc.stderr
    rows: list[object] = json.loads(proc.stdout)["rows"]
    return rows


def _fresh_scene(tmp: Path) -> Scene:
    tmp.mkdir()
    return _scene(tmp)


def test_the_postgresql_commands_run_against_the_suites_server(tmp_path: Path) -> None:
    """"A shared store: PostgreSQL", line by line, against a real server: a reader who set a
    model ("Run a model") makes a store and runs in it, then makes it the default; one with
    a session in the home's files copies it to a second database; a reader on another
    machine brings that copy back into their own home, byte for byte."""
    from segue._workspace import default_workspace_id
    from tests.postgres.cluster import cluster

    assert [c.key for c in readme_commands(README.read_text(encoding="utf-8"))
            if c.key.startswith(("segue store", "segue --store postgresql://me@db.example",
                                 "segue settings set store.url", "segue history migrate",
                                 "segue --store postgresql://…"))] == list(POSTGRES_COMMANDS)
    server = cluster()  # skipped without a server locally; a failure in CI
    store, copy = server.new_database(), server.new_database()
    init, migrate, run, default, back = POSTGRES_COMMANDS

    # A store, a run in it, and the store made every command's default.
    first = _fresh_scene(tmp_path / "store")
    assert _run(first, "segue settings set model scripted:examples/script.json").returncode == 0
    _postgres_line(first, init, {POSTGRES_URL: shlex.quote(store)})
    _postgres_line(first, run, {POSTGRES_URL: shlex.quote(store)})
    in_store = _export(first, "--store", store)
    assert any("…" in json.dumps(row, ensure_ascii=False) for row in in_store)
    assert _export(first) == []  # nothing went to the home's files
    _postgres_line(first, default, {POSTGRES_URL: shlex.quote(store)})
    assert _export(first) == in_store  # no --store: the setting's store answers

    # The home's session copied to a second database.
    second = _fresh_scene(tmp_path / "copy")
    assert _run(second, "segue settings set model scripted:examples/script.json").returncode == 0
    assert _run(second, 'segue run "a session in the home\'s files"').returncode == 0
    local = _export(second)
    assert local, "the home's workspace is empty: the copy would prove nothing"
    _postgres_line(second, migrate, {POSTGRES_URL: shlex.quote(copy)})
    assert _export(second, "--store", copy) == local

    # Another machine, another home: the copy comes back as JSONL files.
    third = _fresh_scene(tmp_path / "back")
    workspace = default_workspace_id(second.work)
    _postgres_line(third, back, {"postgresql://…": shlex.quote(copy), "-w ID": f"-w {workspace}"})
    assert _export(third, "-w", workspace) == local


def test_the_skip_list_is_small_and_current() -> None:
    commands = readme_commands(README.read_text(encoding="utf-8"))
    keys = {c.key for c in commands}
    assert len(SKIPPED) <= MAX_SKIPPED
    assert sorted(set(SKIPPED) - keys) == [], "skipped commands the README no longer has"
    assert sorted(set(POSTGRES_COMMANDS) - keys) == [], "PostgreSQL commands it no longer has"
    assert set(SKIPPED).isdisjoint(POSTGRES_COMMANDS)
    assert sorted(set(EXPECTED_STATUS) - keys) == []
    assert set(SKIPPED).isdisjoint(EXPECTED_STATUS)
    # Most commands run: the skips are the exception.
    assert sum(c.key in SKIPPED for c in commands) * 2 < len(commands)
    text = README.read_text(encoding="utf-8")
    for placeholder in PLACEHOLDERS:
        assert placeholder in text, f"placeholder {placeholder!r} is no longer in the README"


def test_the_extractor_finds_each_kind_of_block() -> None:
    text = (
        "Intro\n\n```bash\nsegue demo   # a comment\n# only a comment\n\n"
        "git diff | segue run -\n```\n\n"
        "    $ echo hi | segue tokens count --json\n    {\"tokens\": 1}\n\nText.\n\n"
        "    claude mcp add segue -- segue mcp serve\n    [mcp_servers.segue]\n"
        "    command = \"segue\"\n\n"
        "```json\n{\"segue\": 1}\n```\n\n"
        "    SEGUE_BENCH_SCALE=large python3 -m bench.run\n"
    )
    found = [(c.line, c.text) for c in readme_commands(text)]
    assert found == [
        (4, "segue demo   # a comment"),
        (7, "git diff | segue run -"),
        (10, "echo hi | segue tokens count --json"),
        (15, "claude mcp add segue -- segue mcp serve"),
        (23, "SEGUE_BENCH_SCALE=large python3 -m bench.run"),
    ]
    assert readme_commands("```sh\nsegue demo  # x\n```\n")[0].key == "segue demo"
    with pytest.raises(AssertionError, match="not a command"):
        readme_commands("```sh\nuvx something\n```\n")
