"""Bundled encodings: published hashes, tiktoken's own parameters, no network, clear errors."""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tiktoken

# tiktoken_ext ships no type information (pyproject only exempts tiktoken.*).
import tiktoken_ext.openai_public as openai_public

from segue._errors import EncodingError
from segue._tokens import encodings

DATA = Path(encodings.__file__).resolve().parent / "data"


def published_hashes() -> dict[str, str]:
    """``expected_hash`` per encoding, read from tiktoken's own source."""
    source = Path(openai_public.__file__).read_text()
    found = re.findall(r'encodings/(\w+)\.tiktoken",\s*expected_hash="([0-9a-f]{64})"', source)
    return dict(found)


@pytest.mark.parametrize("name", encodings.ENCODING_NAMES)
def test_bundled_file_matches_published_hash(name: str) -> None:
    spec = encodings.spec(name)
    assert published_hashes()[name] == spec.sha256
    raw = gzip.decompress((DATA / spec.filename).read_bytes())
    assert hashlib.sha256(raw).hexdigest() == spec.sha256


@pytest.mark.parametrize("name", encodings.ENCODING_NAMES)
def test_pattern_and_special_tokens_are_tiktokens(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Call tiktoken's constructor function with its loader replaced, so it cannot fetch.
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    theirs: dict[str, Any] = getattr(openai_public, name)()
    ours = encodings.spec(name)
    assert theirs["pat_str"] == ours.pat_str
    assert theirs["special_tokens"] == dict(ours.special_tokens)


def test_bundled_encoding_equals_reference_on_sample() -> None:
    enc = encodings.get("cl100k_base")
    assert isinstance(enc, tiktoken.Encoding)
    assert enc.encode_ordinary("hello world") == [15339, 1917]
    assert encodings.get("o200k_base").encode_ordinary("hello world") == [24912, 2375]


def test_package_data_is_declared() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert '"_tokens/data/*"' in pyproject.read_text()
    for spec in encodings.SPECS.values():
        assert (DATA / spec.filename).is_file()
    assert (DATA / "SOURCES.md").is_file()


class ConnectSpy:
    def __init__(self) -> None:
        self.attempts: list[Any] = []


@pytest.fixture
def connect_spy(monkeypatch: pytest.MonkeyPatch) -> ConnectSpy:
    spy = ConnectSpy()
    previous = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> None:
        spy.attempts.append(address)
        previous(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", _refuse(spy))
    return spy


def _refuse(spy: ConnectSpy) -> Any:
    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        spy.attempts.append(address)
        raise OSError("network is not available in this test")

    return create_connection


@pytest.fixture
def damaged_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for spec in encodings.SPECS.values():
        shutil.copy(DATA / spec.filename, tmp_path / spec.filename)
    monkeypatch.setattr(encodings, "data_dir", lambda: tmp_path)
    monkeypatch.setattr(encodings, "_loaded", {})
    return tmp_path


def _tamper(path: Path) -> None:
    raw = gzip.decompress(path.read_bytes())
    # Swap the ranks of two tokens: same size, same format, different tokenizer.
    lines = raw.split(b"\n")
    a, b = lines[1000].split(), lines[1001].split()
    lines[1000], lines[1001] = a[0] + b" " + b[1], b[0] + b" " + a[1]
    path.write_bytes(gzip.compress(b"\n".join(lines)))


def test_tampered_file_is_a_clear_error_without_network(
    damaged_dir: Path, connect_spy: ConnectSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tamper(damaged_dir / "o200k_base.tiktoken.gz")
    calls: list[Any] = []
    monkeypatch.setattr(tiktoken, "get_encoding", lambda *a: calls.append(a))
    with pytest.raises(EncodingError, match=r"o200k_base\.tiktoken\.gz fails its integrity check"):
        encodings.get("o200k_base")
    assert connect_spy.attempts == []
    assert calls == []
    # The damaged file is left where it is (tiktoken's cache would have deleted it).
    assert (damaged_dir / "o200k_base.tiktoken.gz").exists()
    # Another, intact encoding still loads.
    assert encodings.get("cl100k_base").name == "cl100k_base"


def test_corrupt_gzip_is_a_clear_error(damaged_dir: Path, connect_spy: ConnectSpy) -> None:
    (damaged_dir / "cl100k_base.tiktoken.gz").write_bytes(b"not gzip at all")
    with pytest.raises(EncodingError, match=r"cl100k_base\.tiktoken\.gz is corrupt") as info:
        encodings.get("cl100k_base")
    assert info.value.code == "encoding_tampered"
    assert connect_spy.attempts == []


def test_missing_file_is_a_clear_error(damaged_dir: Path, connect_spy: ConnectSpy) -> None:
    (damaged_dir / "o200k_base.tiktoken.gz").unlink()
    with pytest.raises(EncodingError, match="missing") as info:
        encodings.get("o200k_base")
    assert info.value.code == "encoding_missing"
    assert connect_spy.attempts == []


def test_unknown_encoding_names_the_bundled_ones() -> None:
    with pytest.raises(EncodingError, match="o200k_base, cl100k_base"):
        encodings.get("p50k_base")


_FRESH_PROCESS = """
import os, socket, sys
def refuse(*a, **k):
    raise SystemExit("network attempt: %r" % (a,))
socket.socket.connect = refuse
socket.create_connection = refuse
from segue._tokens import count_text, encodings
print(count_text(sys.argv[1], "openai:gpt-4o").tokens)
print(",".join(encodings.loaded_names()))
print("tiktoken_ext.openai_public" in sys.modules)
"""


def test_fresh_process_loads_only_the_needed_encoding_offline(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    env = {"PATH": "/usr/bin:/bin", "TIKTOKEN_CACHE_DIR": str(cache), "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS, "hello world"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    assert out == ["2", "o200k_base", "False"]
    assert not cache.exists()
