"""Look-back quality (R39, §6): does one search with the user's question find the evidence?

    python -m bench.bench_lookback_quality        # the table, every system and idea
    python -m bench.run lookback_quality          # the summary rows

Data: the recorded agent runs in ``../shared/samples/swe-agent-trajectories`` (SEGUE_SAMPLES
overrides the folder), converted to rows as the demo converts them and projected as
``session_history`` projects items. All runs form one history (~190 items), so every question
competes with every other run's items. ``bench/data/lookback_questions.json`` holds natural
questions about five of the runs, each with its evidence named by content: the items of that
run whose text contains one of the given substrings.

Metric: hit rate at k — the share of questions with an evidence item among the first k results
of one call, k = 1, 3, 10. Questions with an even number are the tuning half, odd ones the
held-out half; both are printed. Systems, side by side in one run:

* ``fts5-porter``: the baseline, SQLite FTS5 ``tokenize='porter'``, ``bm25()``, OR of the
  question's words, top 10;
* ``literal-rarest``: today's literal search with the question's rarest word (the word found
  in the fewest items), newest first;
* ``words/fts5``: :mod:`segue._retrieval.words` terms stored pre-analysed in FTS5 (unicode61
  keeping the joiners), ``bm25()``;
* ``words/page``: the pure :class:`~segue._retrieval.words.PageScorer` (BM25 plus the phrase
  bonus) over the whole history as one page, each hit gaining a share of the hit before it
  as the tool's does (:data:`segue._retrieval.ranking.NEIGHBOUR_SHARE`), with each idea
  switched off or on in turn;
* ``tool``: the real ``session_history`` tool with default arguments (literal until words
  search is its default; the row prints which mode ran).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import Result

DATA = Path(__file__).resolve().parent / "data" / "lookback_questions.json"
SAMPLES = Path(
    os.environ.get(
        "SEGUE_SAMPLES",
        Path(__file__).resolve().parents[2] / "shared" / "samples" / "swe-agent-trajectories",
    )
)
if not SAMPLES.is_dir():  # a checkout next to /work/shared
    SAMPLES = Path("/work/shared/samples/swe-agent-trajectories")
#: The same marshmallow run recorded in other prompt formats: copies of the evidence, left out.
_DUPLICATE = re.compile(r"marshmallow-1867__.*__(default_sys-env_|function_calling|xml_)")
KS = (1, 3, 10)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Doc:
    item_id: str
    run: str
    role: str
    text: str


@dataclass(frozen=True)
class Question:
    qid: str
    run: str
    text: str
    evidence: frozenset[str]  # item ids

    @property
    def held_out(self) -> bool:
        return int(self.qid[1:]) % 2 == 1


def load_runs() -> tuple[list[Doc], list[Any]]:
    """Every sample run's items, oldest first, and their rows (for the tool's workspace)."""
    from segue._demo.trajectory import parse_trajectory, trajectory_rows
    from segue._errors import TrajectoryFormatError
    from segue._retrieval.project import project

    docs: list[Doc] = []
    rows: list[Any] = []
    start = 1_700_000_000_000
    for n, path in enumerate(sorted(SAMPLES.glob("*.traj"))):
        name = path.name.removesuffix(".traj")
        if _DUPLICATE.search(name):
            continue
        try:
            run_rows = trajectory_rows(
                parse_trajectory(path.read_bytes(), name).messages,
                prefix=f"run{n}",
                start_ms=start,
                actions_as_tools=True,
            )
        except TrajectoryFormatError:
            continue
        start += (len(run_rows) + 1) * 1000
        rows.extend(run_rows)
        for row in run_rows:
            item = project(row)
            if item is not None:
                docs.append(Doc(item.item_id, name, item.role, item.text))
    return docs, rows


def load_questions(docs: Sequence[Doc]) -> list[Question]:
    spec = json.loads(DATA.read_text(encoding="utf-8"))["questions"]
    out: list[Question] = []
    for q in spec:
        hits = frozenset(
            d.item_id
            for d in docs
            if d.run == q["trajectory"] and any(e in d.text for e in q["evidence"])
        )
        if not hits:
            raise SystemExit(f"bench data: question {q['id']} names no evidence item")
        out.append(Question(q["id"], q["trajectory"], q["question"], hits))
    return out


Search = Callable[[str], list[str]]  # question → item ids, best first


def _fts_query(words: Sequence[str]) -> str:
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def fts5_system(docs: Sequence[Doc], tokenize: str, analyse: Callable[[str], str],
                query_words: Callable[[str], list[str]]) -> Search:  # fmt: skip
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE d USING fts5(body, tokenize={tokenize!r})")
    db.executemany("INSERT INTO d(rowid, body) VALUES (?, ?)",
                   [(i, analyse(doc.text)) for i, doc in enumerate(docs)])  # fmt: skip

    def search(question: str) -> list[str]:
        words = query_words(question)
        if not words:
            return []
        sql = "SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10"
        return [docs[r].item_id for (r,) in db.execute(sql, (_fts_query(words),))]

    return search


def literal_rarest(docs: Sequence[Doc]) -> Search:
    folded = [d.text.casefold() for d in docs]

    def search(question: str) -> list[str]:
        counts = {
            w: sum(1 for t in folded if w in t)
            for w in {w.casefold() for w in _WORD.findall(question)}
        }
        present = [w for w, c in counts.items() if c]
        if not present:
            return []
        rarest = min(present, key=lambda w: (counts[w], -len(w), w))
        hits = [i for i, t in enumerate(folded) if rarest in t]
        return [docs[i].item_id for i in reversed(hits)][:10]  # newest first, as today

    return search


def page_system(docs: Sequence[Doc], **options: Any) -> Search:
    from segue._retrieval import words
    from segue._retrieval.ranking import NEIGHBOUR_SHARE
    from segue._retrieval.stem import STEM_CHARS

    opt = words.Options(stemming=options.get("stemming", True),
                        stem_chars=options.get("stem_chars", STEM_CHARS),
                        identifiers=options.get("identifiers", True))  # fmt: skip
    stop = options.get("stop_words", True)
    phrase = options.get("phrase", True)
    weights = [options.get("system_weight", 1.0) if d.role in ("system", "user") else 1.0
               for d in docs]  # fmt: skip
    k1, b = options.get("k1", words.BM25_K1), options.get("b", words.BM25_B)
    doc_terms = [words.terms(d.text, opt) for d in docs]
    sequences = [words._sequence(d.text, opt) for d in docs]
    # the tool's default: a hit gains a share of the hit before it (ranking.NEIGHBOUR_SHARE)
    share = options.get("neighbours", NEIGHBOUR_SHARE)

    def search(question: str) -> list[str]:
        q = words.query_terms(question, stop_words=stop, opt=opt)
        if options.get("chatty"):
            q = [t for t in q if t not in _CHATTY] or q
        seq = words._sequence(question, opt)
        has = [phrase and len(seq) >= 2 and words._contains_run(s, seq) for s in sequences]
        scores = words.bm25_scores(q, doc_terms, k1=k1, b=b, phrase=has)
        if options.get("pairs"):
            scores = _pair_bonus(q, sequences, scores)
        scores = [s * w for s, w in zip(scores, weights, strict=True)]
        if options.get("prf"):
            scores = _feedback(q, doc_terms, scores, k1, b, weights)
        if share:
            scores = _neighbours(docs, scores, share, options.get("sides", (-1,)))
        order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], -i))
        return [docs[i].item_id for i in order[:10]]

    return search


#: Words of a question about the conversation itself, not its content (stemmed).
_CHATTY = frozenset(
    {"first", "last", "happen", "get", "got", "give", "gave", "work", "call", "name", "tri",
     "end", "final", "actual", "anyth", "someth", "thing"}
)  # fmt: skip


def _neighbours(
    docs: Sequence[Doc], scores: list[float], share: float, sides: tuple[int, ...]
) -> list[float]:
    """Each hit gains ``share`` of the best score of its neighbours on ``sides`` (-1: the
    item before, 1: the item after) in the same run: an answer often stands next to the
    question that holds the words. Only hits gain, so what is a hit does not change (R39)."""
    out = list(scores)
    for i in range(len(docs)):
        if scores[i] <= 0:
            continue
        near = [scores[i + d] for d in sides
                if 0 <= i + d < len(docs) and docs[i + d].run == docs[i].run]  # fmt: skip
        if near:
            out[i] += share * max(near)
    return out


def _pair_bonus(
    q: list[str], sequences: Sequence[Sequence[str]], scores: list[float]
) -> list[float]:
    """+1 for each pair of query terms that stand side by side in the item (in either order)."""
    wanted = set(q)
    out = []
    for seq, score in zip(sequences, scores, strict=True):
        if score <= 0:
            out.append(score)
            continue
        pairs = {
            frozenset((a, b)) for a, b in itertools.pairwise(seq)
            if a != b and a in wanted and b in wanted
        }  # fmt: skip
        out.append(score + len(pairs))
    return out


def _feedback(q: list[str], doc_terms: Sequence[Sequence[str]], scores: list[float],
              k1: float, b: float, weights: Sequence[float]) -> list[float]:  # fmt: skip
    """Pseudo-relevance feedback: the top 3 items' most distinctive terms, at a low weight."""
    import math
    from collections import Counter

    from segue._retrieval import words

    top = sorted(range(len(scores)), key=lambda i: -scores[i])[:3]
    n = len(doc_terms)
    df: Counter[str] = Counter()
    for terms in doc_terms:
        df.update(set(terms))
    gain: dict[str, float] = {}
    for i in top:
        if scores[i] <= 0:
            continue
        for t, tf in Counter(doc_terms[i]).items():
            if t not in q and len(t) > 2:
                gain[t] = gain.get(t, 0.0) + tf * math.log(n / df[t])
    extra = sorted(gain, key=lambda t: -gain[t])[:5]
    more = words.bm25_scores(extra, doc_terms, k1=k1, b=b) if extra else [0.0] * n
    return [s + 0.3 * m * w for s, m, w in zip(scores, more, weights, strict=True)]


def tool_system(rows: Sequence[Any], *, use_index: bool = True) -> tuple[Search, str]:
    """The real ``session_history`` tool over ``rows``; ``use_index=False``: the bounded scan
    answers every call (a history whose index is lost or not built yet)."""
    from segue._history import HistoryStore
    from segue._retrieval import TOOL_SCHEMA, SessionHistoryTool
    from segue._workspace import Layout

    home = Path(tempfile.mkdtemp(prefix="segue-bench-quality-"))
    layout = Layout(home, "quality")
    stored = HistoryStore(layout, durable=False).append(list(rows))
    # The store numbers the rows (item ids become their sequences); the questions' evidence
    # names them by row id (``m:<id>``, SPEC.md §1), as the other systems see them.
    id_of = {str(row.sequence): f"m:{row.id}" for row in stored}
    tool = SessionHistoryTool(layout, use_index=use_index)
    mode = (
        "words" if "match" in TOOL_SCHEMA.get("properties", {}) else "literal (no words search yet)"
    )

    def search(question: str) -> list[str]:
        result = tool.call({"action": "search", "query": question})
        if not result.get("ok"):
            return []
        return [id_of.get(item["itemId"], item["itemId"]) for item in result.get("items", [])]

    return search, mode


def hit_rates(search: Search, questions: Sequence[Question]) -> dict[int, float]:
    found = dict.fromkeys(KS, 0)
    for q in questions:
        ids = search(q.text)
        for k in KS:
            if q.evidence & set(ids[:k]):
                found[k] += 1
    return {k: 100.0 * v / len(questions) for k, v in found.items()} if questions else {}


def plain_words(q: str) -> list[str]:
    """The baseline's query: the question's words as they are."""
    return _WORD.findall(q)


def systems(docs: Sequence[Doc], rows: Sequence[Any]) -> list[tuple[str, Search]]:
    from segue._retrieval import words

    out: list[tuple[str, Search]] = [
        ("fts5-porter (baseline)", fts5_system(docs, "porter", lambda t: t, plain_words)),
        ("literal-rarest", literal_rarest(docs)),
        ("words/fts5", fts5_system(docs, "unicode61 tokenchars '._/\\:-'",
                                   lambda t: " ".join(words.terms(t)), words.query_terms)),
        ("words/page (default)", page_system(docs)),
        ("  - stop words kept in query", page_system(docs, stop_words=False)),
        ("  - no stemming", page_system(docs, stemming=False)),
        ("  - stems not cut (Porter whole)", page_system(docs, stem_chars=0)),
        ("  + stems cut to 4", page_system(docs, stem_chars=4)),
        ("  + stems cut to 6", page_system(docs, stem_chars=6)),
        ("  - no identifier splitting", page_system(docs, identifiers=False)),
        ("  - no phrase bonus", page_system(docs, phrase=False)),
        ("  + system/user prompt x0.5", page_system(docs, system_weight=0.5)),
        ("  + b=0.9", page_system(docs, b=0.9)),
        ("  + b=0.5", page_system(docs, b=0.5)),
        ("  + k1=2.0", page_system(docs, k1=2.0)),
        ("  + pseudo-relevance feedback", page_system(docs, prf=True)),
        ("  + adjacent query-term pairs", page_system(docs, pairs=True)),
        ("  + conversational stop words", page_system(docs, chatty=True)),
        ("  - no neighbours", page_system(docs, neighbours=0.0)),
        ("  + neighbours on both sides", page_system(docs, sides=(-1, 1))),
        ("  + b=0.9 and prompts x0.5", page_system(docs, b=0.9, system_weight=0.5)),
        ("  + pairs, b=0.9, prompts x0.5", page_system(docs, pairs=True, b=0.9, system_weight=0.5)),
    ]  # fmt: skip
    search, mode = tool_system(rows)
    out.append((f"tool, default args [{mode}]", search))
    out.append(("tool, the scan alone (no index)", tool_system(rows, use_index=False)[0]))
    return out


def table() -> tuple[list[str], dict[str, dict[str, dict[int, float]]]]:
    docs, rows = load_runs()
    questions = load_questions(docs)
    halves = {
        "tune": [q for q in questions if not q.held_out],
        "held-out": [q for q in questions if q.held_out],
    }
    runs = sorted({d.run for d in docs})
    lines = [
        f"history: {len(docs)} items, {sum(len(d.text) for d in docs) / 1e3:.0f} kB of text, "
        f"from {len(runs)} runs in {SAMPLES}",
        f"questions: {len(questions)} ({len(halves['tune'])} tune, "
        f"{len(halves['held-out'])} held-out) from {DATA.name}",
        f"{'system':<40} {'tune @1/@3/@10':>20} {'held-out @1/@3/@10':>22}",
    ]
    figures: dict[str, dict[str, dict[int, float]]] = {}
    for name, search in systems(docs, rows):
        figures[name] = {h: hit_rates(search, qs) for h, qs in halves.items()}
        cells = ["/".join(f"{figures[name][h][k]:.0f}" for k in KS) + " %" for h in halves]
        lines.append(f"{name:<40} {cells[0]:>20} {cells[1]:>22}")
    return lines, figures


def hit_results(
    what: str, figures: dict[str, dict[str, dict[int, float]]], halves: Sequence[str]
) -> list[Result]:
    """The summary rows: the tool with its default arguments against the FTS5 baseline, hit
    rate at 10 and at 3 for each of ``halves``."""
    base = figures["fts5-porter (baseline)"]
    # the tool as the model calls it (default arguments), not the page scorer it uses
    ours = next(v for k, v in figures.items() if k.startswith("tool, default args"))
    return [
        Result(
            name=f"{what} hit@{k}, {half}",
            segue_seconds=ours[half][k],
            baseline="fts5 porter bm25()",
            baseline_seconds=base[half][k],
            goal="hit@10 ≥ 85 % (§6); above the baseline",
            ratio_meaning="segue / baseline hit rate (higher is better)",
            unit="%",
            note="session_history, default arguments; deterministic: one run",
        )
        for half in halves
        for k in (10, 3)
    ]


def run() -> list[Result]:
    lines, figures = table()
    print("\n".join(lines))
    return hit_results("look-back", figures, ("tune", "held-out"))


if __name__ == "__main__":
    print("\n".join(table()[0]))
