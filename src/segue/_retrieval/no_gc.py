"""The cyclic garbage collector paused around a build (one idea: no collector passes over
millions of short-lived rows)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: a build or a catch-up allocates millions of
    short-lived rows, texts and tuples, none in a cycle, and its passes over them (and over
    the analysis caches) cost a few per cent of the build."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
