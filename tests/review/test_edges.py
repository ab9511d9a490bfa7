"""Edge behaviour found in review: the command line's contracts (SPEC.md §5)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from segue._cli.main import cli
from segue._tokens import accounting, encodings
from tests.scripted_cli import script

WS = "review"


def segue(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", WS, *args])


@pytest.fixture
def tampered_tokenizer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """o200k_base's bundled ranks with two entries swapped (same size, wrong hash)."""
    data = tmp_path / "tokenizer-data"
    data.mkdir()
    for spec in encodings.SPECS.values():
        source = encodings.package_data_dir().joinpath(spec.filename)
        (data / spec.filename).write_bytes(source.read_bytes())
    target = data / "o200k_base.tiktoken.gz"
    lines = gzip.decompress(target.read_bytes()).split(b"\n")
    a, b = lines[1000].split(), lines[1001].split()
    lines[1000], lines[1001] = a[0] + b" " + b[1], b[0] + b" " + a[1]
    target.write_bytes(gzip.compress(b"\n".join(lines)))
    monkeypatch.setattr(encodings, "data_dir", lambda: data)
    monkeypatch.setattr(encodings, "_loaded", {})
    monkeypatch.setattr(accounting, "_counters", {})


def test_run_json_ends_with_an_error_object_on_a_runtime_failure(
    segue_home: Path, workdir: Path, tmp_path: Path, tampered_tokenizer: None
) -> None:
    """§5: `segue run --json` ends with one JSON object, status "error" and exit 1 for any
    other error — a tampered tokenizer included, not only provider errors."""
    model = script(tmp_path, [{"text": "never sent"}])
    result = segue(segue_home, "run", "--json", "-m", model, "hello")
    assert result.exit_code == 1, result.output
    assert "integrity check" in result.stderr
    closing = json.loads(result.stdout.strip().splitlines()[-1])
    assert closing["status"] == "error"
    assert "integrity check" in closing["reason"]
    assert closing["windowId"] == "w:0"
    assert closing["rollovers"] == 0


# -- chat: rebuilding the session keeps the agent's tool profile ------------------------------


@pytest.mark.parametrize("agent", ["plan", "explore"])
def test_switching_agent_in_chat_keeps_its_caller_restriction(
    tmp_path: Path, workdir: Path, agent: str
) -> None:
    """R12: plan and explore are narrowed by a caller restriction (no bash). `/agent NAME`
    and `/settings set` rebuild the session with keep=; the restriction must survive."""
    from segue._chat.sessions import SessionMaker
    from segue._events import ignore
    from segue._workspace import Layout

    maker = SessionMaker(Layout(tmp_path / "home", WS), workdir, model=script(tmp_path, []))
    fresh = maker.open(agent, ignore)
    assert not fresh.allowed("bash")
    switched = maker.open(agent, ignore, keep=maker.open("exec", ignore))
    assert not switched.allowed("bash")
    assert "bash" not in {tool["name"] for tool in switched.advertised_tools()}
