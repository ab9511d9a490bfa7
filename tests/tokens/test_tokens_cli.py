"""``segue tokens count`` and ``segue tokens calibration`` through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from segue._tokens import calibration_file, encodings
from tests.front import cli

TEXT = "Hello, 世界! 👩🏽‍💻 <|endoftext|>\r\n"


def segue(home: Path, *args: str, stdin: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", "t", *args], input=stdin)


def test_count_json_defaults_to_gpt_4o(segue_home: Path) -> None:
    result = segue(segue_home, "tokens", "count", "--json", stdin=TEXT)
    assert result.exit_code == 0, result.output
    want = len(encodings.get("o200k_base").encode_ordinary(TEXT))
    assert json.loads(result.output) == {"tokens": want, "encoding": "o200k_base", "exact": True}


def test_count_file_with_model_and_encoding(segue_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text(TEXT, encoding="utf-8", newline="")
    cl100k = len(encodings.get("cl100k_base").encode_ordinary(TEXT))
    result = segue(segue_home, "tokens", "count", "-m", "openai:gpt-4", "--json", str(path))
    assert json.loads(result.output) == {"tokens": cl100k, "encoding": "cl100k_base", "exact": True}
    result = segue(segue_home, "tokens", "count", "--encoding", "cl100k_base", "--json", str(path))
    assert json.loads(result.output)["tokens"] == cl100k
    estimate = segue(
        segue_home, "tokens", "count", "-m", "anthropic:claude-sonnet-4-5", "--json", "-",
        stdin=TEXT,
    )
    got = json.loads(estimate.output)
    assert got["exact"] is False and got["encoding"] == "o200k_base"
    assert got["tokens"] > len(encodings.get("o200k_base").encode_ordinary(TEXT))
    human = segue(segue_home, "tokens", "count", "-m", "anthropic:claude-sonnet-4-5", stdin=TEXT)
    assert "estimate" in human.output


def test_scripted_model_counts_with_its_encoding(segue_home: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps({"contextWindow": 100, "encoding": "cl100k_base", "responses": []})
    )
    result = segue(segue_home, "tokens", "count", "-m", f"scripted:{script}", "--json", stdin="hi")
    assert json.loads(result.output) == {"tokens": 1, "encoding": "cl100k_base", "exact": True}


def test_unknown_model_is_a_usage_error(segue_home: Path) -> None:
    result = segue(segue_home, "tokens", "count", "-m", "openai-compatible:mystery", stdin="hi")
    assert result.exit_code == 2
    assert "unknown model" in result.output and "--encoding" in result.output
    ok = segue(
        segue_home,
        "tokens",
        "count",
        "-m",
        "openai-compatible:mystery",
        "--encoding",
        "o200k_base",
        "--json",
        stdin="hi",
    )
    assert ok.exit_code == 0 and json.loads(ok.output)["exact"] is True


def test_non_utf8_input_is_refused(segue_home: Path) -> None:
    result = segue(segue_home, "tokens", "count", stdin=b"\xff\xfe\x00")
    assert result.exit_code == 2
    assert "not UTF-8" in result.output


def test_calibration_shows_observed_ratio(segue_home: Path) -> None:
    empty = segue(segue_home, "tokens", "calibration")
    assert "no calibration samples yet" in empty.output
    calibration_file.record(segue_home, "claude", 1000, 1250)
    shown = segue(segue_home, "tokens", "calibration")
    assert "claude" in shown.output and "1.250" in shown.output
    as_json = json.loads(segue(segue_home, "tokens", "calibration", "--json").output)
    assert as_json["families"]["claude"]["reported"] == 1250


_OFFLINE_CLI = """
import socket, sys
def refuse(*a, **k):
    raise SystemExit("network attempt")
socket.socket.connect = refuse
socket.create_connection = refuse
from segue._cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_real_process_counts_offline(segue_home: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _OFFLINE_CLI, "tokens", "count", "--json"],
        input="hello world",
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "SEGUE_HOME": str(segue_home), "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"tokens": 2, "encoding": "o200k_base", "exact": True}
