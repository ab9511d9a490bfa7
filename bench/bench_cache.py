"""Prompt caching: input tokens billed over a recorded 50-turn agent session on Anthropic,
with and without segue's cache breakpoints.

The session is the demo's material (the packaged SWE-agent trajectories, with their tool
calls and recorded outputs), played as one window: request *k* holds the exec agent's system
text, the real built-in tool schemas, and every step before step *k*. The requests are built
by the adapter itself (:func:`segue.providers.anthropic_messages.request_params`), once with
``cache=True`` (segue's breakpoints) and once with ``cache=False`` (no ``cache_control``: what
the adapter sent before). Each block is counted with the model's encoding.

The provider's cache is modelled with Anthropic's published rules (printed with the result):

1. the prompt is a prefix in the order tools → system → messages; a ``cache_control``
   breakpoint asks for the prefix up to and including its block to be cached;
2. a request reads the longest cached prefix it repeats exactly; the lookup runs at each of
   its breakpoints and looks back at most 20 blocks from it;
3. a prefix shorter than 1,024 tokens is not cached (Sonnet / Opus minimum);
4. without a breakpoint nothing is read or written;
5. prices relative to base input: cache write 1.25×, cache read 0.1× (5-minute TTL, every
   turn of the session is assumed to follow within 5 minutes, so no entry expires).

Measured: uncached input tokens (everything not read from the cache: base-price and
cache-write tokens) over the 50 requests, and the cost in base-input-token equivalents. Five
sessions (the stream of steps started at five offsets) give the median with min–max. Goal:
≥ 3× fewer uncached input tokens. Deterministic, so it runs the same on any machine.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import SCALE, Result
from segue.demo.trajectory import iter_packaged_rows
from segue.messages import Row, make_row
from segue.policy import resolve_agent
from segue.providers.anthropic_messages import request_params
from segue.providers.request import ProviderRequest
from segue.tokens import count_text, resolve_model
from segue.tools.builtin import builtin_tools
from segue.workspace import Layout

TURNS = 50
SESSIONS = 5 if SCALE != "large" else 11
LOOKBACK = 20
MIN_CACHEABLE = 1024
WRITE_PRICE, READ_PRICE = 1.25, 0.1
MODEL = "anthropic:claude-sonnet-4-5"
RULES = ("Anthropic prompt caching: prefix tools→system→messages; reads the longest cached "
         f"prefix at a breakpoint (≤{LOOKBACK}-block lookback); min {MIN_CACHEABLE} tokens; "
         f"write {WRITE_PRICE}×, read {READ_PRICE}× base input; 5-min TTL, no expiry")


@dataclass
class Bill:
    uncached: int = 0  # base-price input tokens
    written: int = 0
    read: int = 0

    @property
    def not_read(self) -> int:
        return self.uncached + self.written

    @property
    def cost(self) -> float:
        return self.uncached + WRITE_PRICE * self.written + READ_PRICE * self.read


def flatten(params: dict[str, Any]) -> tuple[list[str], list[int]]:
    """The request as a prefix of blocks (JSON without ``cache_control``), and the indexes
    of the blocks that carry a breakpoint."""
    blocks: list[str] = []
    marks: list[int] = []

    def add(block: dict[str, Any], where: str) -> None:
        if "cache_control" in block:
            marks.append(len(blocks))
        plain = {k: v for k, v in block.items() if k != "cache_control"}
        blocks.append(where + json.dumps(plain, sort_keys=True, ensure_ascii=False))

    for tool in params.get("tools", []):
        add(tool, "tool:")
    system = params.get("system")
    if isinstance(system, str):
        blocks.append("system:" + system)
    for block in system if isinstance(system, list) else []:
        add(block, "system:")
    for message in params["messages"]:
        for block in message["content"]:
            add(block, message["role"] + ":")
    return blocks, marks


class Cache:
    def __init__(self, count: Any) -> None:
        self._count = count
        self._entries: set[str] = set()
        self._tokens: dict[str, int] = {}

    def tokens(self, block: str) -> int:
        if block not in self._tokens:
            self._tokens[block] = int(self._count(block))
        return self._tokens[block]

    def bill(self, blocks: Sequence[str], marks: Sequence[int]) -> Bill:
        sizes = [self.tokens(b) for b in blocks]
        prefix = [0]
        keys: list[str] = []
        digest = hashlib.sha256()
        for block, size in zip(blocks, sizes, strict=True):
            prefix.append(prefix[-1] + size)
            digest.update(block.encode("utf-8") + b"\x00")
            keys.append(digest.copy().hexdigest())
        read_to = 0  # number of leading blocks read from the cache
        for mark in marks:
            for end in range(mark, max(mark - LOOKBACK, -1), -1):
                if keys[end] in self._entries:
                    read_to = max(read_to, end + 1)
                    break
        written_to = read_to
        for mark in marks:
            if prefix[mark + 1] >= MIN_CACHEABLE:
                self._entries.add(keys[mark])
                written_to = max(written_to, mark + 1)
        read = prefix[read_to]
        written = prefix[written_to] - read
        return Bill(uncached=prefix[-1] - read - written, written=written, read=read)


def session_rows(offset: int) -> list[list[Row]]:
    """The rows before each of ``TURNS`` steps, the stream of steps started at ``offset``."""
    stream = [r for r in iter_packaged_rows(actions_as_tools=True) if r.role != "system"]
    steps = [i for i, r in enumerate(stream) if r.role == "assistant"]
    start = steps[offset % len(steps)]
    ordered = stream[start:] + stream[:start]
    rows: list[Row] = [make_row("user", "Work on the task below.", id="start")]
    before: list[list[Row]] = []
    n = 0
    while len(before) < TURNS:
        for row in ordered:
            if row.role == "assistant":
                if rows[-1].role == "assistant":
                    # A step that ended its turn: the next one starts with a user message.
                    rows.append(make_row("user", "Continue.", id=f"go-{n}"))
                before.append(list(rows))
                if len(before) == TURNS:
                    break
            rows.append(row)
            n += 1
    return before


def bills(offset: int, system: str, tools: tuple[dict[str, Any], ...], cache: Cache,
          bare: Cache, per_turn: list[tuple[Bill, Bill]] | None = None) -> tuple[Bill, Bill]:
    with_bp, without = Bill(), Bill()
    for rows in session_rows(offset):
        request = ProviderRequest(system, tuple(rows), tools)
        turn: list[Bill] = []
        for on, total, model in ((True, with_bp, cache), (False, without, bare)):
            blocks, marks = flatten(request_params(request, "claude-sonnet-4-5", 8192, cache=on))
            one = model.bill(blocks, marks)
            turn.append(one)
            total.uncached += one.uncached
            total.written += one.written
            total.read += one.read
        if per_turn is not None:
            per_turn.append((turn[0], turn[1]))
    return with_bp, without


def _setup() -> tuple[Any, str, tuple[dict[str, Any], ...]]:
    token_model = resolve_model(MODEL)

    def count(text: str) -> int:
        return count_text(text, token_model).tokens

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        layout = Layout(Path(tmp) / "home", "bench")
        agent = resolve_agent("exec", work)
        tools = tuple(builtin_tools(layout, work).advertised(lambda _name: True))
    return count, agent.prompt, tools


def run() -> list[Result]:
    count, system, tools = _setup()
    ratios: list[float] = []
    cost_ratios: list[float] = []
    last: tuple[Bill, Bill] | None = None
    for offset in range(0, SESSIONS * 11, 11):
        with_bp, without = bills(offset, system, tools, Cache(count), Cache(count))
        ratios.append(without.not_read / with_bp.not_read)
        cost_ratios.append(without.cost / with_bp.cost)
        last = (with_bp, without)
    assert last is not None
    with_bp, without = last
    median = statistics.median(ratios)
    return [Result(
        name=f"cache: uncached input, {TURNS}-turn session (anthropic)",
        segue_seconds=float(with_bp.not_read),
        baseline=f"same requests without cache_control ({without.not_read} tokens)",
        baseline_seconds=float(without.not_read),
        goal=">= 3x fewer uncached input tokens",
        ratio_meaning="segue / baseline uncached input tokens",
        unit="tokens",
        note=(f"{median:.1f}x fewer uncached (median of {len(ratios)} sessions, "
              f"min {min(ratios):.1f}x, max {max(ratios):.1f}x); cost "
              f"{statistics.median(cost_ratios):.1f}x lower (min {min(cost_ratios):.1f}x, "
              f"max {max(cost_ratios):.1f}x); last session: {with_bp.read} read, "
              f"{with_bp.written} written, {with_bp.uncached} base; rule: {RULES}"),
    )]


def main() -> None:
    """Per turn, one session: ``python -m bench.bench_cache``."""
    count, system, tools = _setup()
    per_turn: list[tuple[Bill, Bill]] = []
    bills(0, system, tools, Cache(count), Cache(count), per_turn)
    print(RULES)
    print(f"{'turn':>4} {'input':>8} {'read':>8} {'written':>8} {'base':>8} {'cost':>9} "
          f"{'no-cache cost':>13}")
    for n, (with_bp, without) in enumerate(per_turn, 1):
        total = with_bp.read + with_bp.written + with_bp.uncached
        print(f"{n:>4} {total:>8} {with_bp.read:>8} {with_bp.written:>8} {with_bp.uncached:>8} "
              f"{with_bp.cost:>9.0f} {without.cost:>13.0f}")


if __name__ == "__main__":
    main()
