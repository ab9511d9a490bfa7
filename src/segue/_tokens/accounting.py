"""The public face of ``segue._tokens``: resolve a model, count text and requests.

Invariants:

* Every :class:`Count` says which encoding produced it and whether it is ``exact`` for the
  model (OpenAI families, scripted models and explicitly named encodings) or an estimate
  (other families, scaled by their factor; see :mod:`segue._tokens.registry`).
* Hard guards use :func:`count_request` / :func:`count_text`, which always run the real
  encoding. :func:`approximate_text` and :func:`approximate_request` (characters / 4) are for
  display only and say so (``encoding == "approximate"``, ``exact`` False).
* One :class:`RequestCounter` (and so one memo) per encoding per process, loaded lazily.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from segue._errors import UnknownModelError, UsageError
from segue._messages import Row
from segue._tokens import encodings
from segue._tokens.counting import approximate_text as _approx
from segue._tokens.counting import count_text as _count_text
from segue._tokens.registry import TokenModel, resolve, split_model
from segue._tokens.request import RequestCounter, Tally, json_bytes

APPROXIMATE = "approximate"


@dataclass(frozen=True)
class Count:
    """A token count. ``complete`` is False when a ceiling stopped counting early; the
    ``tokens`` are then already above that ceiling."""

    tokens: int
    encoding: str
    exact: bool
    model: str = ""
    complete: bool = True

    def to_json(self) -> dict[str, Any]:
        """The SPEC.md §5 shape of ``segue tokens count --json``."""
        return {"tokens": self.tokens, "encoding": self.encoding, "exact": self.exact}


def read_scripted_encoding(path: str | Path) -> str:
    """The ``encoding`` a scripted-provider file names (SPEC.md §5)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read scripted model file {path}: {exc}") from None
    encoding = data.get("encoding") if isinstance(data, dict) else None
    if not isinstance(encoding, str):
        raise UnknownModelError(f"scripted:{path}", 'its file names no "encoding"')
    return encoding


def resolve_model(model: str | None, encoding: str | None = None) -> TokenModel:
    """Like :func:`segue._tokens.registry.resolve`, reading a scripted model's file for its
    encoding when none is named."""
    if model is None and encoding is None:
        raise UsageError("name a model (provider:name) or an encoding")
    if model is not None and encoding is None:
        provider, name = split_model(model)
        if provider == "scripted":
            encoding = read_scripted_encoding(name)
    return resolve(model, encoding)


_counters: dict[str, RequestCounter] = {}
_counters_lock = threading.Lock()


def counter_for(encoding: str) -> RequestCounter:
    """The process-wide memoizing counter for ``encoding``."""
    found = _counters.get(encoding)
    if found is None:
        encoder = encodings.get(encoding)
        with _counters_lock:
            found = _counters.setdefault(encoding, RequestCounter(encoder))
    return found


def _as_model(model: TokenModel | str | None, encoding: str | None) -> TokenModel:
    if isinstance(model, TokenModel):
        return model
    return resolve_model(model, encoding)


def _finish(token_model: TokenModel, tally: Tally) -> Count:
    return Count(
        tokens=token_model.scale(tally.text) + tally.fixed,
        encoding=token_model.encoding,
        exact=token_model.exact,
        model=token_model.model,
        complete=tally.complete,
    )


def count_text(
    text: str,
    model: TokenModel | str | None = None,
    *,
    encoding: str | None = None,
    ceiling: int | None = None,
) -> Count:
    """Tokens of ``text`` alone (no message framing) for ``model`` or ``encoding``."""
    token_model = _as_model(model, encoding)
    encoder = encodings.get(token_model.encoding)
    # Scaled tokens are never fewer than text tokens, so the raw ceiling stops no earlier
    # than it should.
    counted = _count_text(encoder, text, ceiling=ceiling)
    return _finish(token_model, Tally(counted.tokens, 0, counted.complete))


def count_request(
    system: str,
    rows: Sequence[Row],
    tools: Sequence[Mapping[str, Any]],
    model: TokenModel | str | None,
    *,
    encoding: str | None = None,
    ceiling: int | None = None,
) -> Count:
    """Tokens of a whole provider request: framing, system text, the rows' parts and the
    advertised tool schemas (pass only those, R20). Incremental: rows already counted in
    this process are not encoded again."""
    token_model = _as_model(model, encoding)
    counter = counter_for(token_model.encoding)
    tally = counter.request(system, rows, tools, ceiling=ceiling, scale=token_model.scale)
    return _finish(token_model, tally)


def count_row(row: Row, model: TokenModel | str | None, *, encoding: str | None = None) -> Count:
    """Tokens one row adds to a request (its framing included)."""
    token_model = _as_model(model, encoding)
    return _finish(token_model, counter_for(token_model.encoding).row(row))


# -- display-only approximation ----------------------------------------------------------------


def approximate_text(text: str) -> Count:
    """Characters / 4: for a meter the user configured as approximate. Never for guards."""
    return Count(_approx(text), APPROXIMATE, exact=False)


def approximate_request(
    system: str, rows: Sequence[Row], tools: Sequence[Mapping[str, Any]]
) -> Count:
    """Characters / 4 over the request's text and JSON. Never for guards."""
    chars = len(system)
    for row in rows:
        for part in row.parts:
            if part.type in ("text", "reasoning"):
                chars += len(part.text or "")
            else:
                chars += len(json_bytes(msgspec.to_builtins(part)))
    for tool in tools:
        chars += len(json_bytes(tool))
    return Count(-(-chars // 4), APPROXIMATE, exact=False)
