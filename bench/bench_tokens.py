"""Token accounting: chunked counting vs raw tiktoken, incremental recount, cold start.

    python -m bench.run tokens

* chunked count vs ``Encoding.encode_ordinary`` on ~1 MB of code and ~1 MB of multilingual
  text (goal: at most 1.25× the raw time, i.e. at least 0.8× its throughput);
* recount of a ~150k-token request after one appended row vs a full recount with a fresh
  counter (goal: at least 50× faster);
* cold start: a fresh process that counts one string vs a bare ``python -c pass``.
"""

from __future__ import annotations

import glob
import json
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from bench.common import SCALE, Result, best_of, side_by_side
from segue._messages import Part, Row, make_row
from segue._tokens import encodings
from segue._tokens.counting import count_text
from segue._tokens.request import RequestCounter

ROOT = Path(__file__).resolve().parents[1]
TRAJECTORIES = ROOT.parent / "shared" / "samples" / "swe-agent-trajectories"
MB = 1_000_000


def _code_text(size: int) -> str:
    """Python source: the project's own, topped up from the standard library."""
    files = sorted((ROOT / "src").rglob("*.py"))
    files += sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    out: list[str] = []
    total = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        out.append(text)
        total += len(text)
        if total >= size:
            break
    return "".join(out)[:size]


_MULTILINGUAL = (
    "The context engine keeps every message on disk and starts a fresh window. ",
    "Le moteur de contexte conserve chaque message sur le disque. ",
    "Der Kontext bleibt vollständig erhalten, auch nach dem Wechsel. ",
    "上下文引擎把每条消息都保存在磁盘上，然后开启新的窗口。",
    "コンテキストエンジンはすべてのメッセージをディスクに保存します。",
    "컨텍스트 엔진은 모든 메시지를 디스크에 보관합니다. ",
    "محرك السياق يحتفظ بكل رسالة على القرص ويبدأ نافذة جديدة. ",
    "Движок контекста хранит каждое сообщение на диске. ",
    "इंजन हर संदेश को डिस्क पर रखता है। ",
    "👩🏽‍💻 rolled over 🇫🇷🇯🇵 ✅\n",
)


def _multilingual_text(size: int) -> str:
    out: list[str] = []
    total = 0
    i = 0
    while total < size:
        piece = _MULTILINGUAL[(i * 7) % len(_MULTILINGUAL)]
        out.append(piece)
        total += len(piece.encode("utf-8"))
        i += 1
        if i % 40 == 0:
            out.append("\n\n")
    return "".join(out)


def _conversation(target_tokens: int) -> list[Row]:
    """Rows from the sample SWE-agent trajectories (or generated text), ~target tokens."""
    contents: list[tuple[str, str]] = []
    for path in sorted(glob.glob(str(TRAJECTORIES / "*.traj"))):
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        for entry in data.get("history", []):
            if isinstance(entry, dict) and isinstance(entry.get("content"), str):
                role = entry.get("role")
                contents.append(("assistant" if role == "assistant" else "user", entry["content"]))
    if not contents:
        contents = [("user", _code_text(4000)), ("assistant", _multilingual_text(3000))]
    rows: list[Row] = []
    budget = target_tokens * 4  # ~4 characters per token for this material
    i = 0
    while budget > 0:
        role, text = contents[i % len(contents)]
        if role == "assistant" and i % 3 == 0:
            part = Part(
                type="dynamic-tool",
                toolCallId=f"call-{i}",
                toolName="bash",
                input={"command": text[:200]},
                output={"type": "text", "value": text},
                state="output-available",
            )
            rows.append(make_row("assistant", id=f"r{i}", parts=[part]))
        else:
            rows.append(make_row("user" if role == "user" else "assistant", text, id=f"r{i}"))
        budget -= len(text)
        i += 1
    return rows


def _throughput(name: str, text: str) -> Result:
    enc = encodings.get("o200k_base")
    repeat = 3 if SCALE == "small" else 7
    segue_s, raw_s = side_by_side(
        lambda: count_text(enc, text), lambda: enc.encode_ordinary(text), repeat=repeat
    )
    chunked = count_text(enc, text).tokens
    exact = len(enc.encode_ordinary(text))
    return Result(
        name=f"tokens: chunked count, {name}",
        segue_seconds=segue_s,
        baseline="tiktoken encode_ordinary (whole string)",
        baseline_seconds=raw_s,
        goal="<= 1.25x time (>= 0.8x throughput)",
        note=f"{len(text.encode()) / MB:.2f} MB, {exact} tokens, chunked +{chunked - exact}",
    )


def _incremental() -> Result:
    enc = encodings.get("o200k_base")
    rows = _conversation(150_000)
    system = "You are a careful software engineer. " * 40
    warm = RequestCounter(enc)
    warm.request(system, rows, [])
    appended = make_row("user", "Please run the tests again and report.", id="new")
    state = {"n": 0}

    def incremental() -> object:
        # A fresh row object each time, as a new message would be.
        state["n"] += 1
        row = make_row("user", f"Please run the tests again ({state['n']}).", id="new")
        return warm.request(system, [*rows, row], [])

    def full() -> object:
        return RequestCounter(enc).request(system, [*rows, appended], [])

    tokens = RequestCounter(enc).request(system, [*rows, appended], [])
    inc_s = best_of(incremental, repeat=20)
    full_s = best_of(full, repeat=3)
    return Result(
        name="tokens: recount after one appended row",
        segue_seconds=inc_s,
        baseline="full recount, fresh counter",
        baseline_seconds=full_s,
        goal="<= 0.02x time (>= 50x faster)",
        note=f"{len(rows)} rows, {tokens.text + tokens.fixed} tokens",
    )


_COLD = "from segue._tokens import count_text; count_text('hello world', 'openai:gpt-4o')"


def _cold_start() -> Result:
    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    repeat = 3 if SCALE == "small" else 7
    cold = min(run(_COLD) for _ in range(repeat))
    bare = min(run("pass") for _ in range(repeat))
    return Result(
        name="tokens: cold start, first count (o200k only)",
        segue_seconds=cold,
        baseline="python -c pass",
        baseline_seconds=bare,
        goal="report (lazy: one encoding loaded)",
        note=f"+{(cold - bare) * 1000:.0f} ms over a bare interpreter",
    )


def run() -> list[Result]:
    size = MB if SCALE == "small" else 4 * MB
    return [
        _throughput("1 MB code", _code_text(size)),
        _throughput("1 MB multilingual", _multilingual_text(size)),
        _incremental(),
        _cold_start(),
    ]
