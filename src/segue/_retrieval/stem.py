"""Word stems for R39's words search: the Porter stemmer (M. F. Porter, "An algorithm for
suffix stripping", 1980), pure Python, with its stem cut to :data:`STEM_CHARS` characters.

:func:`porter` is the algorithm as published, with the two later corrections Porter's own
reference implementation carries (``bli`` → ``ble`` and ``logi`` → ``log`` in step 2). It
folds the usual English inflections together ("connected", "connecting", "connection" →
``connect``) so that a words search finds an item whatever form the question used.

:func:`stem` keeps the first :data:`STEM_CHARS` characters of that stem: words of one family
that Porter leaves apart meet too ("driver" and "driving", "photograph" and "photo",
"counselor" and "counseling"), at the price of some unrelated ones ("install", "instance").
Measured on both look-back quality benches (bench/bench_lookback_conversations.py and
bench/bench_lookback_quality.py), cutting to 5 ranked evidence higher on the tuning and the
held-out questions alike; 4 lost on the agent runs, 6 and 7 kept less of the gain. Input is
one lower-case ASCII word; anything else is returned unchanged. Pure and deterministic: the
same word always gives the same stem, so documents and queries meet.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["STEM_CHARS", "porter", "stem"]

#: the characters of a Porter stem a term keeps (see the module docstring)
STEM_CHARS = 5

_VOWELS = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: how many vowel-consonant sequences the stem has."""
    m = 0
    previous_vowel = False
    for i in range(len(stem)):
        vowel = not _is_consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _ends_cvc(word: str) -> bool:
    """*o: the word ends consonant-vowel-consonant, the last not w, x or y."""
    if len(word) < 3:
        return False
    n = len(word)
    return (
        _is_consonant(word, n - 3)
        and not _is_consonant(word, n - 2)
        and _is_consonant(word, n - 1)
        and word[-1] not in "wxy"
    )


def _replace(word: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    """The first rule whose suffix ends the word decides (applied or not): Porter's steps 2-4."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            if _measure(stem) > min_measure:
                return stem + replacement
            return word
    return word


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
    ("logi", "log"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _step1ab(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
        return word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                return word + "e"
            if _ends_double_consonant(word) and word[-1] not in "lsz":
                return word[:-1]
            if _measure(word) == 1 and _ends_cvc(word):
                return word + "e"
            return word
    return word


def _step4(word: str) -> str:
    # The longest matching suffix decides ("ement" before "ment" before "ent").
    for suffix in sorted((s for s in _STEP4 if word.endswith(s)), key=len, reverse=True):
        stem = word[: -len(suffix)]
        if _measure(stem) <= 1:
            return word
        if suffix == "ion" and not stem.endswith(("s", "t")):
            return word
        return stem
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=1 << 16)
def stem(word: str, chars: int = STEM_CHARS) -> str:
    """A word's term: its :func:`porter` stem's first ``chars`` characters (0: the whole
    stem; other input than a lower-case ASCII word of 3 letters or more as is)."""
    found = porter(word)
    return found[:chars] if chars and len(found) > chars and _stemmed(word) else found


@lru_cache(maxsize=1 << 16)
def porter(word: str) -> str:
    """The Porter stem of one lower-case ASCII word (other input and words of ≤ 2 letters as is)."""
    if not _stemmed(word):
        return word
    word = _step1ab(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    word = _step4(word)
    return _step5(word)


def _stemmed(word: str) -> bool:
    """Whether :func:`porter` stems the word: lower-case ASCII letters, 3 or more of them."""
    return len(word) > 2 and word.isascii() and word.isalpha() and word.islower()
