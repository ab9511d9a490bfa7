"""R39's words analysis and ranking (segue._retrieval.words, segue._retrieval.stem): pure units
and properties over many spellings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from segue._retrieval.stem import porter, stem
from segue._retrieval.words import (
    STOP_WORDS,
    Options,
    PageScorer,
    _sequence,
    best_passage,
    bm25_scores,
    holds_any,
    query_terms,
    term_counts,
    terms,
)

# Porter's published examples (the paper and the reference vocabulary).
PORTER = {
    "caresses": "caress", "ponies": "poni", "cats": "cat", "feed": "feed", "agreed": "agre",
    "plastered": "plaster", "motoring": "motor", "sing": "sing", "conflated": "conflat",
    "hopping": "hop", "falling": "fall", "filing": "file", "happy": "happi", "sky": "sky",
    "relational": "relat", "conditional": "condit", "rational": "ration",
    "vietnamization": "vietnam", "hopefulness": "hope", "sensibiliti": "sensibl",
    "electrical": "electr", "goodness": "good", "adjustment": "adjust", "adoption": "adopt",
    "replacement": "replac", "effective": "effect", "probate": "probat", "controll": "control",
    "generalizations": "gener", "connection": "connect", "connected": "connect",
    "connecting": "connect",
}  # fmt: skip


def test_porter_examples() -> None:
    wrong = {w: porter(w) for w, s in PORTER.items() if porter(w) != s}
    assert wrong == {}


def test_a_term_is_the_porter_stem_cut_to_five_characters() -> None:
    # SPEC.md R39 "the usual inflections folded": the cut joins what Porter leaves apart
    assert stem("driver") == stem("driving") == stem("drives") == "drive"
    assert stem("photograph") == stem("photos") == "photo"
    assert stem("counselor") == stem("counseling")
    assert {w: stem(w) for w in PORTER} == {w: s[:5] for w, s in PORTER.items()}
    assert stem("connection", 0) == "connect"  # 0: the whole Porter stem
    assert stem("cats") == "cat" and stem("plaster") == "plast"


def test_stem_leaves_other_input_alone() -> None:
    for word in ("is", "Running", "größe", "e1101", "", "configuration_file", "ABCDEFGH"):
        assert stem(word) == word
        assert porter(word) == word


def test_inflections_meet() -> None:
    assert set(query_terms("serializers")) & set(terms("the Serialization failed"))
    assert query_terms("running tests") == ["run", "test"]


IDENTIFIERS = [
    ("parse_config", ["parse_config", "parse config", "config"]),
    ("ERR_CONNECTION_RESET", ["ERR_CONNECTION_RESET", "connection reset", "err_connection_reset"]),
    ("camelCase", ["camelCase", "camelcase", "camel case"]),
    ("HTTPServer", ["HTTPServer", "http server"]),
    ("os.path.join", ["os.path.join", "path join"]),
    ("src/a/b.py", ["src/a/b.py", "b.py"]),
    ("src/marshmallow/numpy_handler.py", ["numpy_handler.py", "numpy handler"]),
    ("E1101", ["E1101", "e1101"]),
    ("HTTP 404", ["404", "http 404"]),
]


def test_identifiers_findable_whole_and_by_parts() -> None:
    checked = 0
    for text, queries in IDENTIFIERS:
        doc = set(terms(f"log: {text} was seen"))
        for query in queries:
            wanted = query_terms(query)
            assert wanted, query
            assert set(wanted) <= doc, (text, query, wanted, doc)
            checked += 1
    assert checked == sum(len(q) for _, q in IDENTIFIERS)


def test_whole_is_its_own_term() -> None:
    # The whole identifier is a term of its own, so an exact identifier outranks its parts alone.
    assert "parse_config" in terms("parse_config()")
    assert "parse_config" not in terms("parse the config")


def test_numbers_kept_stop_words_dropped_from_queries_only() -> None:
    assert "404" in terms("HTTP 404 Not Found")
    assert "the" in terms("the file")
    assert "the" not in query_terms("what is the file")
    assert query_terms("what is the") == ["what", "is", "the"]  # nothing else: keep them
    assert {"what", "which", "did", "we"} <= STOP_WORDS


def test_digest_not_shredded() -> None:
    assert terms("a3f9c2d81e") == ["a3f9c2d81e"]


def test_unicode_folding() -> None:
    assert query_terms("STRASSE") == query_terms("Straße")
    assert terms("ＥＲＲＯＲ") == terms("error")  # NFKC: full-width letters


def test_bm25_rare_words_weigh_more_and_more_words_rank_higher() -> None:
    docs = [
        ["error", "common"],
        ["error", "rare"],
        ["common", "x"],
        ["common", "y"],
        ["error", "rare", "common"],
    ]
    s = bm25_scores(["rare", "common"], docs)
    assert s[1] > s[0]  # the rare word weighs more than the common one
    assert s[4] > s[1]  # more of the query's words
    assert bm25_scores(["absent"], docs) == [0.0] * 5


def test_bm25_long_items_do_not_win_by_length() -> None:
    short = ["serializer", "fix"]
    long = ["serializer"] + [f"w{i}" for i in range(200)]
    s = bm25_scores(["serializer"], [short, long, ["other"]])
    assert s[0] > s[1] > 0.0


def test_exact_phrase_ranks_highest() -> None:
    page = PageScorer(
        [
            "connection reset by peer",
            "reset the connection, then retry the connection reset handler reset reset",
            "peer reset connection by connection",
            "unrelated",
        ]
    )
    order = page.rank("connection reset by peer")
    assert order[0] == 0
    assert 3 not in order


def test_rank_ties_go_to_the_newer_item_and_weights_apply() -> None:
    page = PageScorer(["the token", "the token"])
    assert page.rank("token") == [1, 0]
    weighted = PageScorer(["the token", "the token"], weights=[1.0, 0.25])
    assert weighted.rank("token") == [0, 1]


def test_best_passage_centres_on_the_meeting_words() -> None:
    text = "error " + "filler " * 200 + "the final AttributeError of the serializer " + "z " * 200
    start, end = best_passage(text, "serializer attributeerror", 80)
    assert end - start == 80
    assert "AttributeError of the serializer" in text[start:end]


def test_best_passage_no_match_is_start() -> None:
    assert best_passage("abc " * 100, "zzz", 10) == (0, 10)
    assert best_passage("short", "zzz", 10) == (0, 5)


_TEXT = st.text(
    alphabet=st.sampled_from([*"abcXYZ019_./-:é ßΣσ\n\t,()\"'", "ﬁ", "½", "𝔘", "Ⅻ"]),
    max_size=80,
)


@given(_TEXT)
def test_terms_never_empty(text: str) -> None:
    assert all(t for t in terms(text))
    assert all(t for t in query_terms(text))


@given(_TEXT)
def test_case_invariance(text: str) -> None:
    # Upper and lower case spellings of one text (no camelCase humps in either) meet.
    assert set(terms(text.upper())) == set(terms(text.lower()))
    assert set(query_terms(text.casefold())) == set(query_terms(text.lower()))


@given(st.lists(st.from_regex(r"[a-z]{2,6}", fullmatch=True), min_size=2, max_size=4))
def test_identifier_whole_and_parts(words: list[str]) -> None:
    for ident in ("_".join(words), ".".join(words), "/".join(words),
                  words[0] + "".join(w.capitalize() for w in words[1:])):  # fmt: skip
        doc = set(terms(f"see {ident} here"))
        assert set(query_terms(ident)) <= doc
        assert {stem(w) for w in words} <= doc


@given(_TEXT, _TEXT, st.integers(min_value=0, max_value=100))
def test_best_passage_bounds(text: str, query: str, width: int) -> None:
    start, end = best_passage(text, query, width)
    assert 0 <= start <= end <= len(text)
    assert end - start == min(width, len(text))


_WORDY = st.lists(
    st.sampled_from(["the ", "a ", "reset ", "Reset", "connection ", "peer ", "by ", "ﬁle ",
                     "parse_config ", "parseConfig ", "src/a.py ", "Σ ", "\n", ", "]),
    max_size=12,
).map("".join)


def _run_in(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


@given(st.lists(_WORDY, min_size=1, max_size=6), _WORDY)
def test_page_scores_are_bm25_of_the_whole_terms(texts: list[str], query: str) -> None:
    # The page reads only what the query needs of each text; its scores must be exactly BM25
    # over each text's whole list of terms, plus the bonus where the text holds the phrase
    # (the phrase's words found token by token, with no cache: Options() is not the default).
    slow = Options()
    words = _sequence(query, slow)
    phrase = [len(words) >= 2 and _run_in(_sequence(t, slow), words) for t in texts]
    expected = bm25_scores(query_terms(query), [terms(t) for t in texts], phrase=phrase)
    assert PageScorer(texts).scores(query) == expected
    assert [_sequence(t) for t in texts] == [_sequence(t, slow) for t in texts]


@given(_WORDY, _WORDY)
def test_holds_any_is_sharing_a_term(text: str, query: str) -> None:
    wanted = query_terms(query)
    assert holds_any(text, wanted) == bool(set(wanted) & set(terms(text)))


@given(st.lists(_WORDY, min_size=1, max_size=6), _WORDY, _WORDY)
def test_a_hits_kept_tokens_answer_its_later_asks(texts: list[str], q1: str, q2: str) -> None:
    # A search asks of each hit whether it is one, then its counts and its page score; what
    # the first ask keeps of a hit must answer the later asks exactly, whatever was asked
    # before (texts repeat, queries interleave).
    slow = Options()
    for query in (q1, q2, q1):
        wanted = list(dict.fromkeys(query_terms(query)))
        for text in texts:
            holds_any(text, wanted)
        for text in texts:
            whole = terms(text)
            assert term_counts(text, wanted) == (len(whole), [whole.count(w) for w in wanted])
        words = _sequence(query, slow)
        phrase = [len(words) >= 2 and _run_in(_sequence(t, slow), words) for t in texts]
        expected = bm25_scores(query_terms(query), [terms(t) for t in texts], phrase=phrase)
        assert PageScorer(texts).scores(query) == expected
