"""What a ``bash`` command runs, read by a real shell parser (SPEC.md R38). Pure.

:func:`simple_command` answers one question: is this command text exactly one simple
command whose every word is a fixed string (so what it runs is what the user read), and if so,
what are its words after quote removal (its ``argv``)? Anything else is *shell syntax* and the
answer says which: a list or pipeline (``;``, ``&&``, ``||``, ``|``, ``&``), a redirection, a
substitution or expansion (``$x``, ``$(…)``, backquotes, ``$((…))``, ``<(…)``), a glob or a
brace expansion (``*.py`` or ``-{exec,x}`` become words the user never saw), an assignment
in front of the command (``PAGER=… git log``), a comment, a compound command, a newline or a
control character, or text the parser cannot read.

The parser is tree-sitter with the tree-sitter-bash grammar (maintained, binary wheels,
error-tolerant so a broken command is reported as such instead of raising). It is imported on
first use. Without it no command counts as simple, so remembered rules never match (the call
asks): a missing parser can only make segue ask more.

The check is a whitelist over the syntax tree: a node kind not named here makes the command
not simple, so a grammar change can only make segue ask more, never less.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

#: Characters an unquoted word may hold and still mean only itself. A glob (``*?[``), a brace
#: (``{``), ``$``, a backquote, ``!`` or a parenthesis makes the shell rewrite the word.
_PLAIN_UNQUOTED = re.compile(r"[A-Za-z0-9_./:=,+%@^~#-]+")


@dataclass(frozen=True)
class Words:
    """``argv`` when the command is one simple command of fixed words, else ``why`` not."""

    argv: tuple[str, ...] | None
    why: str = ""


class _NotSimple(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def simple_command(command: str) -> Words:
    """The fixed words of ``command``, or why it is not one simple command of fixed words."""
    if not command.strip():
        return Words(None, "the command is empty")
    for ch in command:
        if ch in "\n\r":
            return Words(None, "it spans more than one line")
        if ch != "\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            return Words(None, f"it holds the invisible character U+{ord(ch):04X}")
    try:
        parser = _parser()
    except ImportError:
        return Words(None, "the shell parser (tree-sitter-bash) is not installed")
    try:
        tree = parser.parse(command.encode("utf-8", "surrogatepass"))
    except (UnicodeError, ValueError):
        return Words(None, "the shell parser cannot read it")
    root = tree.root_node
    if root.has_error or root.type != "program":
        return Words(None, "the shell parser cannot read it")
    if root.child_count != 1 or root.children[0].type != "command":
        kinds = {c.type for c in root.children}
        return Words(None, f"it is not one simple command ({_describe(kinds)})")
    try:
        return Words(tuple(_argv(root.children[0])))
    except _NotSimple as exc:
        return Words(None, exc.why)


def _describe(kinds: set[str]) -> str:
    if "comment" in kinds:
        return "a comment"
    for token, words in ((";", "a ; list"), ("&", "a background &")):
        if token in kinds:
            return words
    named = sorted(k for k in kinds if k not in ("command",))
    return ", ".join(k.replace("_", " ") for k in named) or "more than one command"


def _argv(command: Any) -> list[str]:
    argv: list[str] = []
    for child in command.children:
        kind = child.type
        if kind == "command_name":
            if child.child_count != 1:
                raise _NotSimple("its program name is not a plain word")
            argv.append(_word(child.children[0]))
        elif kind == "variable_assignment":
            raise _NotSimple("it sets a variable for the program (NAME=value before it)")
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            raise _NotSimple("it redirects input or output")
        elif child.text == b"{}":
            argv.append("{}")  # a lone {} is no brace expansion (find's placeholder)
        else:
            argv.append(_word(child))
    if not argv:
        raise _NotSimple("it names no program")
    return argv


def _word(node: Any) -> str:
    """The value of one word after quote removal; _NotSimple when the shell would change it."""
    kind = node.type
    text: str = node.text.decode("utf-8", "surrogatepass")
    if kind == "word":
        return _unquoted(text)
    if kind == "number":  # an argument that looks like a number is a literal word
        return _unquoted(text)
    if kind == "raw_string":  # '…': everything inside is literal
        return text[1:-1]
    if kind == "string":  # "…": literal only when nothing inside expands
        parts: list[str] = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                raise _NotSimple(f"{_what(child.type)} inside {text!r}")
            parts.append(_in_double_quotes(child.text.decode("utf-8", "surrogatepass")))
        return "".join(parts)
    if kind == "concatenation":
        return "".join(_word(child) for child in node.children)
    raise _NotSimple(_what(kind))


def _what(kind: str) -> str:
    return {
        "command_substitution": "a command substitution",
        "process_substitution": "a process substitution",
        "simple_expansion": "a variable expansion",
        "expansion": "a parameter expansion",
        "arithmetic_expansion": "an arithmetic expansion",
        "brace_expression": "a brace expansion",
        "ansi_c_string": "a $'…' string",
        "translated_string": "a $\"…\" string",
        "$": "a $ the shell expands",
    }.get(kind, f"shell syntax ({kind.replace('_', ' ')})")


def _unquoted(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if not _PLAIN_UNQUOTED.fullmatch(ch) or (ch == "~" and i > 0) or (ch == "#" and i == 0):
            if ch in "*?[]":
                raise _NotSimple(f"the glob {text!r} may expand to words not shown")
            if ch in "{}":
                raise _NotSimple(f"the brace expansion {text!r} may expand to words not shown")
            if ch == "~":  # only a leading tilde expands
                out.append(ch)
                i += 1
                continue
            raise _NotSimple(f"the shell character {ch!r} in {text!r}")
        out.append(ch)
        i += 1
    return "".join(out)


def _in_double_quotes(text: str) -> str:
    if "$" in text or "`" in text:
        raise _NotSimple(f"an expansion inside \"{text}\"")
    return re.sub(r'\\([\\"$`])', r"\1", text)
