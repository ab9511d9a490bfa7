"""Look-back quality on long conversations (R39, §6): one words search with the question.

    python -m bench.bench_lookback_conversations    # the table, every system and idea
    python -m bench.run lookback_conversations      # the summary rows

SPEC.md §6 measures look-back on long real conversations between people (weekly chats over
months, each session one context window, evidence turns annotated), not on agent runs
(``bench_lookback_quality``). ``bench/data/conversations.json`` holds three such chats written
for this project (about 200 turns and 11 sessions each) and 75 questions with their evidence
turns: single facts, facts joined across sessions, "when did…", and inferences, phrased as a
person asks them rather than in the evidence's words.

Each conversation is its own history, as a user's session is: a turn is one row (the first
speaker's as ``user``, the second's as ``assistant``), its text led by the speaker's name, and
each session after the first opens a window with a rollover boundary. The metric is hit rate
at k (an evidence turn among the first k results of one call), k = 1, 3, 10, over every
question; even-numbered questions are the tuning half, odd ones the held-out half. Systems,
side by side in one run:

* ``fts5-porter``: the baseline, SQLite FTS5 ``tokenize='porter'``, ``bm25()``, OR of the
  question's words, top 10;
* ``words/page``: :class:`~segue._retrieval.words` terms and BM25 over the whole history as one
  page, with ideas switched on in turn;
* ``tool``: the real ``session_history`` tool, default arguments (a words search of the
  question, 10 items);
* the baseline and the tool again over the same turns without their speaker's name in front
  (a transcript whose rows carry only their role): a question naming a person then meets
  only the turns that mention them;
* both again over one history holding the three conversations one after the other (637 rows,
  33 windows: about the turns and sessions of one long real conversation), with and without
  the names: every question then meets the other conversations' turns too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.bench_lookback_quality import (
    KS,
    Doc,
    Question,
    Search,
    fts5_system,
    hit_results,
    page_system,
    plain_words,
    tool_system,
)
from bench.common import Result

DATA = Path(__file__).resolve().parent / "data" / "conversations.json"


def load(
    *, names: bool = True, one: bool = False
) -> list[tuple[str, list[Doc], list[Any], list[Question]]]:
    """(conversation id, its items oldest first, its rows, its questions) per conversation;
    ``names=False``: each turn's text without its speaker's name in front; ``one``: the
    conversations one after the other in one history (a window per session), as one entry."""
    from bench.agent_rows import boundary
    from segue._messages import make_row
    from segue._retrieval.project import project

    spec = json.loads(DATA.read_text(encoding="utf-8"))
    out = []
    number = 0
    windows = 0  # of the one history
    for conv in spec["conversations"]:
        first = conv["speakers"][0]
        rows: list[Any] = []
        for n, session in enumerate(conv["sessions"]):
            # each session after the first opens a window (in the one history, every session
            # after its very first)
            tag, k = ("one", windows) if one else (conv["id"], n)
            if k:
                rows.append(boundary(tag, k))
            windows += 1
            for turn in session["turns"]:
                text = f"{turn['speaker']}: {turn['text']}" if names else turn["text"]
                if turn["speaker"] == first:
                    rows.append(make_row("user", text, id=turn["id"]))
                else:
                    rows.append(make_row("assistant", text, id=turn["id"]))
        docs = []
        for row in rows:
            item = project(row)
            if item is not None:
                docs.append(Doc(item.item_id, conv["id"], item.role, item.text))
        ids = {d.item_id for d in docs}
        questions = []
        for q in spec["questions"]:
            if q["conversation"] != conv["id"]:
                continue
            evidence = frozenset(f"m:{e}" for e in q["evidence"])
            if not evidence <= ids:
                raise SystemExit(f"bench data: {q['question']!r} names a turn that is not there")
            questions.append(Question(f"q{number}", conv["id"], q["question"], evidence))
            number += 1
        out.append((conv["id"], docs, rows, questions))
    if one:
        return [("one", [d for c in out for d in c[1]], [r for c in out for r in c[2]],
                 [q for c in out for q in c[3]])]  # fmt: skip
    return out


def systems(docs: Sequence[Doc], rows: Sequence[Any]) -> list[tuple[str, Search]]:
    from segue._retrieval import words

    out: list[tuple[str, Search]] = [
        ("fts5-porter (baseline)", fts5_system(docs, "porter", lambda t: t, plain_words)),
        ("words/fts5", fts5_system(docs, "unicode61 tokenchars '._/\\:-'",
                                   lambda t: " ".join(words.terms(t)), words.query_terms)),
        ("words/page (default)", page_system(docs)),
        ("  - stop words kept in query", page_system(docs, stop_words=False)),
        ("  - stems not cut (Porter whole)", page_system(docs, stem_chars=0)),
        ("  + stems cut to 4", page_system(docs, stem_chars=4)),
        ("  + stems cut to 6", page_system(docs, stem_chars=6)),
        ("  + b=0.5", page_system(docs, b=0.5)),
        ("  + b=0.9", page_system(docs, b=0.9)),
        ("  + k1=2.0", page_system(docs, k1=2.0)),
        ("  + pseudo-relevance feedback", page_system(docs, prf=True)),
        ("  + adjacent query-term pairs", page_system(docs, pairs=True)),
        ("  - no neighbours", page_system(docs, neighbours=0.0)),
        ("  + neighbours on both sides", page_system(docs, sides=(-1, 1))),
        ("  + neighbours x0.5", page_system(docs, neighbours=0.5)),
    ]  # fmt: skip
    search, _ = tool_system(rows)
    out.append(("tool, default args [words]", search))
    out.append(("tool, the scan alone (no index)", tool_system(rows, use_index=False)[0]))
    return out


#: the same questions over turns whose text does not name their speaker (a transcript whose
#: rows carry only the role): the baseline and the tool, side by side
NAMELESS = ("fts5-porter, turns without names", "tool, turns without names")
#: the same again over one history holding the three conversations, one after the other
#: (a window per session: about as many turns and windows as one long real conversation)
ONE = ("fts5-porter, one history", "tool, one history")
ONE_NAMELESS = ("fts5-porter, one history, no names", "tool, one history, no names")

Systems = Callable[[Sequence[Doc], Sequence[Any]], list[tuple[str, Search]]]


def baseline_and_tool(names: tuple[str, str]) -> Systems:
    """The FTS5 baseline and the tool, under ``names``."""

    def make(docs: Sequence[Doc], rows: Sequence[Any]) -> list[tuple[str, Search]]:
        return [
            (names[0], fts5_system(docs, "porter", lambda t: t, plain_words)),
            (names[1], tool_system(rows)[0]),
        ]

    return make


def table() -> tuple[list[str], dict[str, dict[str, dict[int, float]]]]:
    conversations = load()
    every = [q for c in conversations for q in c[3]]
    halves = {
        "tune": [q for q in every if not q.held_out],
        "held-out": [q for q in every if q.held_out],
        "all": every,
    }
    items = sum(len(c[1]) for c in conversations)
    lines = [
        f"{len(conversations)} conversations, {items} turns, from {DATA.name}; "
        f"questions: {len(every)} ({len(halves['tune'])} tune, {len(halves['held-out'])} "
        "held-out)",
        f"{'system':<34} {'tune @1/@3/@10':>16} {'held-out @1/@3/@10':>20} {'all @1/@3/@10':>16}",
    ]
    found: dict[str, dict[str, dict[int, int]]] = {}
    runs: list[tuple[tuple[str, list[Doc], list[Any], list[Question]], Systems]]
    runs = [(c, systems) for c in conversations]
    runs += [(c, baseline_and_tool(NAMELESS)) for c in load(names=False)]
    runs += [(c, baseline_and_tool(ONE)) for c in load(one=True)]
    runs += [(c, baseline_and_tool(ONE_NAMELESS)) for c in load(names=False, one=True)]
    for (_, docs, rows, questions), make in runs:
        for name, search in make(docs, rows):
            mine = found.setdefault(name, {h: dict.fromkeys(KS, 0) for h in halves})
            ranked = {q.qid: search(q.text) for q in questions}
            for h, qs in halves.items():
                for q in qs:
                    if q.qid in ranked:
                        for k in KS:
                            mine[h][k] += bool(q.evidence & set(ranked[q.qid][:k]))
    figures = {
        name: {h: {k: 100.0 * n / len(halves[h]) for k, n in by.items()} for h, by in f.items()}
        for name, f in found.items()
    }
    for name, f in figures.items():
        cells = ["/".join(f"{f[h][k]:.0f}" for k in KS) + " %" for h in halves]
        lines.append(f"{name:<34} {cells[0]:>16} {cells[1]:>20} {cells[2]:>16}")
    return lines, figures


def run() -> list[Result]:
    lines, figures = table()
    print("\n".join(lines))
    return hit_results("conversation look-back", figures, ("held-out", "all"))


if __name__ == "__main__":
    print("\n".join(table()[0]))
