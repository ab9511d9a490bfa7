"""Exact, offline token accounting (SPEC.md R17, R19, R20, §6).

What the context engine calls::

    from segue._tokens import count_request, resolve_model

    model = resolve_model("openai:gpt-4o")            # once per pinned model
    count = count_request(system, rows, advertised_tools, model, ceiling=limit)
    count.tokens, count.exact, count.complete

Encodings (``o200k_base``, ``cl100k_base``) ship inside the package, are hash-checked on
load and are loaded lazily, only the one needed. Nothing here touches the network.
"""

from __future__ import annotations

from segue._tokens.accounting import (
    APPROXIMATE,
    Count,
    approximate_request,
    approximate_text,
    count_request,
    count_row,
    count_text,
    counter_for,
    read_scripted_encoding,
    resolve_model,
)
from segue._tokens.calibration import Calibration, FamilyStats
from segue._tokens.encodings import ENCODING_NAMES
from segue._tokens.registry import DEFAULT_MODEL, TokenModel, resolve

__all__ = [
    "APPROXIMATE",
    "DEFAULT_MODEL",
    "ENCODING_NAMES",
    "Calibration",
    "Count",
    "FamilyStats",
    "TokenModel",
    "approximate_request",
    "approximate_text",
    "count_request",
    "count_row",
    "count_text",
    "counter_for",
    "read_scripted_encoding",
    "resolve",
    "resolve_model",
]
