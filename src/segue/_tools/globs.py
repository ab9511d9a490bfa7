"""Glob patterns over workspace-relative POSIX paths. Pure.

* ``*`` matches within one path component, ``?`` one character of it, ``[abc]`` / ``[!abc]``
  a character class, ``{a,b}`` either alternative (not nested);
* ``**`` matches any number of components: ``**/x.py``, ``src/**``, ``a/**/b``;
* a pattern without ``/`` matches a file *name* at any depth (``*.py`` finds ``src/a.py``),
  the way ripgrep's and git's globs do; a pattern with ``/`` matches the whole relative path,
  and a leading ``./`` or ``/`` anchors a pattern at the workspace root (``./PLAN.md``).

The standard library cannot do this in 3.11 (``fnmatch`` lets ``*`` cross ``/``, and
``PurePath.match`` has no ``**``), hence this small translator.
"""

from __future__ import annotations

import re
from functools import lru_cache

from segue._tools.base import ToolRefusal


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    n = len(pattern)
    in_brace = False
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before_ok = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if before_ok and after < n and pattern[after] == "/":
                    out.append("(?:[^/]*/)*")
                    i = after + 1
                    continue
                if before_ok and after == n:
                    out.append(".*")
                    i = after
                    continue
            out.append("[^/]*")
            while i < n and pattern[i] == "*":
                i += 1
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{" and not in_brace:
            out.append("(?:")
            in_brace = True
        elif c == "}" and in_brace:
            out.append(")")
            in_brace = False
        elif c == "," and in_brace:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if in_brace:
        raise ToolRefusal("invalid_argument", f"glob {pattern!r} has an unclosed '{{'")
    return "".join(out)


@lru_cache(maxsize=128)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex matching the paths ``pattern`` selects (see the module docstring)."""
    if not pattern or "\x00" in pattern:
        raise ToolRefusal("invalid_argument", "a glob must be a non-empty string")
    # "./x" and "/x" both mean "x at the workspace root", never a name at any depth.
    anchored = pattern.startswith(("./", "/"))
    body = pattern[2:] if pattern.startswith("./") else pattern.lstrip("/")
    if "/" not in body and not anchored:
        body = "**/" + body
    try:
        return re.compile(_translate(body) + r"\Z")
    except re.error as exc:
        raise ToolRefusal("invalid_argument", f"glob {pattern!r} is not valid: {exc}") from None


def glob_matches(pattern: str, rel_path: str) -> bool:
    return compile_glob(pattern).match(rel_path) is not None
