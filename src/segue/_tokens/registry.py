"""Which encoding counts for which model, and how far to trust it. Pure data and lookups.

Models are named ``provider:name`` (SPEC.md §5): ``openai:gpt-4o``,
``anthropic:claude-sonnet-4-5``, ``openai-compatible:qwen2.5-coder``, ``scripted:PATH``.

Invariants:

* OpenAI families map to their real encoding and are **exact** (factor 1).
* Every other family is an **estimate**: the nearest bundled encoding times a correction
  factor chosen on the high side, because the hard guards (R16–R18) would rather stop one
  request early than send one that overflows. ``exact`` is False for them, always.
* An unknown model is :class:`UnknownModelError`; nothing guesses. Naming an encoding
  explicitly (``encoding=``) is the way out: the count is then that encoding's own exact
  count, factor 1, ``exact`` True (it is exact *for that encoding*; the family, if the model
  is known, is kept for calibration).
* ``scripted:PATH`` counts with the encoding its script names; the caller reads the file
  (see :func:`segue._tokens.resolve_model`), this module stays free of I/O.

Evidence for the factors (ratio = family tokens / o200k tokens for the same text):

* Claude up to 4.6: measurements of Claude 3.5 Sonnet against GPT-4o on fixed prompts found
  about +16 % for English prose, +21 % for maths and +30 % for Python code (VentureBeat,
  "Hidden costs in AI deployment: why Claude models may be 20–30 % more expensive than GPT",
  May 2025). 1.5 leaves room above the worst measured domain.
* Claude Opus 4.7 ships a new tokenizer that Anthropic's migration guide puts at 1.0–1.35×
  the previous one; independent count_tokens probes found up to 1.45–1.47× for English and
  technical docs (claudecodecamp.com, "I measured Claude 4.7's new tokenizer", April 2026).
  1.3 × 1.47 ≈ 1.9, so later Claude generations get 2.0 until calibration says otherwise.
* Gemini (SentencePiece, 256k vocabulary), DeepSeek (128k BPE), Qwen (151k BPE), Mistral
  (Tekken 131k; older 32k SentencePiece), Llama 3 (128k, a superset of cl100k): all
  tokenize English and code within roughly ±20 % of o200k in public comparisons, older
  32k-vocabulary models up to ~1.4×. 1.35 covers the modern ones with margin, 1.5 the
  small-vocabulary ones.

Calibration (:mod:`segue._tokens.calibration`) records the provider's reported input usage
against these estimates, so the factors can be tightened from observation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from segue._errors import UnknownModelError
from segue._tokens.encodings import ENCODING_NAMES, spec

PROVIDERS: tuple[str, ...] = (
    "openai", "openai-responses", "anthropic", "openai-compatible", "scripted")

#: The model `segue tokens count` uses when none is named: a common OpenAI model with an
#: exact, bundled encoding.
DEFAULT_MODEL = "openai:gpt-4o"


@dataclass(frozen=True)
class Family:
    name: str
    #: Matched against the lower-cased model name (its last ``/`` segment).
    pattern: re.Pattern[str]
    encoding: str
    factor: float

    @property
    def exact(self) -> bool:
        return self.factor == 1.0


def _family(name: str, pattern: str, encoding: str, factor: float) -> Family:
    return Family(name, re.compile(pattern), encoding, factor)


# Order matters: the first match wins (gpt-4o before gpt-4, later Claude before Claude).
OPENAI_FAMILIES: tuple[Family, ...] = (
    _family(
        "openai",
        r"(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|gpt-oss|codex)([-.:_].*)?",
        "o200k_base",
        1.0,
    ),
    _family(
        "openai",
        r"(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)([-.:_].*)?",
        "cl100k_base",
        1.0,
    ),
)
OTHER_FAMILIES: tuple[Family, ...] = (
    _family("claude", r"claude-(opus|sonnet|haiku)-(4-[7-9]|[5-9]).*", "o200k_base", 2.0),
    _family("claude", r"claude.*", "o200k_base", 1.5),
    _family("gemini", r"(gemini|gemma).*", "o200k_base", 1.35),
    _family("deepseek", r"deepseek.*", "o200k_base", 1.35),
    _family("qwen", r"(qwen|qwq).*", "o200k_base", 1.35),
    _family("llama", r"(meta-)?(code)?llama-?[3-9].*", "o200k_base", 1.35),
    _family("llama", r"(meta-)?(code)?llama.*", "o200k_base", 1.5),
    _family(
        "mistral",
        r"(mistral|mixtral|codestral|devstral|ministral|magistral).*",
        "o200k_base",
        1.5,
    ),
)


@dataclass(frozen=True)
class TokenModel:
    """How to count for one model."""

    #: The model as given (``provider:name``), or ``""`` when only an encoding was named.
    model: str
    #: Calibration key: ``openai``, ``claude``, ``gemini``, …, ``scripted`` or ``custom``.
    family: str
    encoding: str
    factor: float
    exact: bool

    def scale(self, tokens: int) -> int:
        """The estimate for ``tokens`` counted in :attr:`encoding` (rounded up)."""
        if self.factor == 1.0:
            return tokens
        # Integer maths in thousandths so 1.35 × 100 is 135, not 135.00000000000003 → 136.
        milli = round(self.factor * 1000)
        return -(-tokens * milli // 1000)


def split_model(model: str) -> tuple[str, str]:
    provider, sep, name = model.partition(":")
    if not sep or not name:
        raise UnknownModelError(
            model, "models are named provider:name, e.g. openai:gpt-4o or anthropic:claude-…"
        )
    if provider not in PROVIDERS:
        choices = ", ".join(f"{p}:" for p in PROVIDERS)
        raise UnknownModelError(model, f"unknown provider {provider!r}; use one of {choices}")
    return provider, name


def _match(families: tuple[Family, ...], name: str) -> Family | None:
    key = name.lower().rsplit("/", 1)[-1]
    for family in families:
        if family.pattern.fullmatch(key):
            return family
    return None


def find_family(model: str) -> Family | None:
    """The family of a ``provider:name`` model, or None when it is not known."""
    provider, name = split_model(model)
    if provider in ("openai", "openai-responses"):
        return _match(OPENAI_FAMILIES, name)
    if provider == "anthropic":
        family = _match(OTHER_FAMILIES, name)
        return family if family is not None and family.name == "claude" else None
    if provider == "openai-compatible":
        return _match(OPENAI_FAMILIES, name) or _match(OTHER_FAMILIES, name)
    return None  # scripted: the script names its encoding


def resolve(model: str | None, encoding: str | None = None) -> TokenModel:
    """How to count for ``model``, or for an explicitly named ``encoding``.

    Raises UnknownModelError for an unknown model without an encoding, and EncodingError
    for an encoding that is not bundled.
    """
    if encoding is not None:
        spec(encoding)  # validates the name
    if model is None:
        if encoding is None:
            raise UnknownModelError("", "name a model or an encoding")
        return TokenModel("", "custom", encoding, 1.0, True)
    provider, _ = split_model(model)
    if provider == "scripted":
        if encoding is None:
            raise UnknownModelError(model, "a scripted model counts with its file's encoding")
        return TokenModel(model, "scripted", encoding, 1.0, True)
    family = find_family(model)
    if encoding is not None:
        return TokenModel(model, family.name if family else "custom", encoding, 1.0, True)
    if family is None:
        names = " or ".join(ENCODING_NAMES)
        raise UnknownModelError(
            model,
            f"no tokenizer is known for it; name one explicitly (encoding={names})",
            cli_hint=f"no tokenizer is known for it; name one explicitly (--encoding {names})",
        )
    return TokenModel(model, family.name, family.encoding, family.factor, family.exact)
