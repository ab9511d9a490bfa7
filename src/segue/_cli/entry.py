"""The ``segue`` console script: the fast path of ``segue history search`` first
(:mod:`segue._cli.quick_search`, no click), then the full command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``segue`` with ``argv`` (default: the process's arguments); the exit code."""
    from segue._cli.quick_search import try_search

    code = try_search(sys.argv[1:] if argv is None else argv)
    if code is not None:
        return code
    from segue._cli.main import main as full

    return full(argv)
