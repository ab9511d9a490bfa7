"""``segue history search QUERY`` over a current history index, answered without click.

The search is the command people run over the largest transcripts, where the answer comes
from the index in a few milliseconds and the rest is start-up. So the console entry point
(:mod:`segue._cli.entry`) first tries this path: it recognizes only the plain spellings of
the command (the global ``--home``/``-w`` options, ``history search``, one QUERY, ``--json``),
resolves them exactly as the root command does (:func:`segue._cli.context.resolve`), asks the
index (:func:`segue._retrieval.index_people.search_people`) and prints through the command's
own :func:`segue._cli.search_view.print_search`.

Anything else answers None *before printing anything*, and the full command line runs
instead: another spelling, a bad option or id, a PostgreSQL store, an unreadable setting, an
index that is missing or cannot be trusted now (the full command scans). So the output and
the exit code are always the full command's (tests/cli/test_quick_search.py compares them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_HOME = "--home"
_WORKSPACE = ("-w", "--workspace")


def _globals(args: list[str]) -> tuple[dict[str, str], list[str]] | None:
    """The global options before the command, and what follows them."""
    found: dict[str, str] = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if eq and name in (_HOME, "--workspace"):
            i += 1
        elif arg in (_HOME, *_WORKSPACE) and i + 1 < len(args):
            name, value = arg, args[i + 1]
            i += 2
        else:
            return None
        if not value or value.startswith("-"):
            return None
        found["home" if name == _HOME else "workspace"] = value  # the last one wins, as in click
    return found, args[i:]


def parse(args: list[str]) -> tuple[Path | None, str | None, str, bool] | None:
    """``(home, workspace, query, as_json)`` when ``args`` is a plain spelling of
    ``segue [--home DIR] [-w ID] history search [--json] QUERY [--json]``; else None."""
    split = _globals(args)
    if split is None:
        return None
    options, rest = split
    if rest[:2] != ["history", "search"]:
        return None
    words = [a for a in rest[2:] if a != "--json"]
    if len(words) != 1 or not words[0] or words[0].startswith("-"):
        return None
    home = options.get("home")
    return (
        Path(home) if home is not None else None,
        options.get("workspace"),
        words[0],
        len(words) < len(rest) - 2,
    )


def try_search(args: list[str]) -> int | None:
    """Run the search and return its exit code, or None (nothing printed): not this path."""
    parsed = parse(args)
    if parsed is None:
        return None
    home, workspace, query, as_json = parsed
    if home is not None and not os.path.isdir(home):
        return None  # click reports a home that is a file; a missing home has no index
    from segue._cli.context import resolve
    from segue._errors import SegueError

    try:
        obj = resolve(home, workspace, None)
        if obj.store_url is not None:
            return None  # PostgreSQL answers in SQL (the full command)
        # What pick_backend's index backend answers a person's search with, called without
        # building that backend: the fast path loads no page machinery (the whole point).
        from segue._retrieval.index_people import search_people

        answered = search_people(obj.layout, query, context=60)
        hits = None if answered is None else list(answered)
    except (SegueError, OSError):
        return None  # the full command says what is wrong, in its words
    if hits is None:
        return None  # no trustworthy index now: the full command scans
    from segue._cli.search_view import print_search

    try:
        found = print_search(obj.workspace_id, query, hits, as_json=as_json)
    except OSError as exc:  # as the root command's backstop does (segue._cli.main)
        if not isinstance(exc, BrokenPipeError):
            from segue._fsutil import describe_os_error

            print(f"segue: error: {describe_os_error(exc)}", file=sys.stderr)
            return 2  # the full command's exit status for an error (as grep's)
        return 1
    return 0 if found else 1  # as grep's (and the full command's)
