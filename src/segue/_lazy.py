"""Package attributes imported on first use (PEP 562), from a table ``name -> module``.

A package's ``__init__`` keeps its public names in such a table and defines::

    def __getattr__(name: str) -> object:
        return load(__name__, _LAZY, name)

so that importing the package, or one of its light submodules, does not import the heavy
ones: ``import segue`` and ``segue --help`` stay fast.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from importlib import import_module


def load(package: str, table: Mapping[str, str], name: str) -> object:
    """``name`` from its module in ``table``, kept in ``package`` for the next look-up.

    A name not in the table raises AttributeError, which is also what lets ``from package
    import submodule`` fall back to importing the submodule."""
    module = table.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    setattr(sys.modules[package], name, value)
    return value


def listing(namespace: Iterable[str], table: Mapping[str, str]) -> list[str]:
    """``dir(package)``: what is loaded already and every lazy name."""
    return sorted({*namespace, *table})
