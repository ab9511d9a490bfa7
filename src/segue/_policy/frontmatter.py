"""A strict parser for the YAML subset agent files use in their front matter. Pure.

An agent file is ``---`` / front matter / ``---`` / body. The front matter is written in a
small, documented subset of YAML syntax:

* mappings by indentation (``key: value``, nested ``key:`` followed by indented lines);
* block lists (``- item``) and flow lists (``[a, 'b', "c"]``);
* flow mappings of the above (``{add: [a], remove: [b]}``);
* scalars: plain, ``'single'`` (``''`` is a quote) or ``"double"`` (escapes ``\\\\ \\" \\/``
  ``\\t \\n`` only). Scalars are always strings: unlike full YAML there is no implicit
  typing, so a tool named ``yes`` or ``null`` stays that string;
* ``#`` comments on their own line or after whitespace.

Everything else (anchors, aliases, tags, block scalars, tabs for indentation, duplicate keys)
is refused with an error naming the line, rather than guessed at. Regexes with ``#``, ``,``,
brackets or braces must be quoted; single quotes keep backslashes as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from segue._errors import UsageError

Value = str | list["Value"] | dict[str, "Value"]

_FENCE = "---"
_INDICATORS = frozenset("&*!|>%@`")
_DOUBLE_ESCAPES = {"\\": "\\", '"': '"', "/": "/", "t": "\t", "n": "\n"}


class FrontMatterError(UsageError):
    code = "bad_front_matter"

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


@dataclass(frozen=True)
class Document:
    front_matter: dict[str, Value]
    body: str


def split_document(text: str) -> Document:
    """Split ``text`` into parsed front matter and the body (leading blank lines dropped)."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != _FENCE:
        raise FrontMatterError("the file must start with a '---' front matter line", line=1)
    for end in range(1, len(lines)):
        if lines[end].rstrip("\r\n").rstrip() == _FENCE:
            header = [ln.rstrip("\r\n") for ln in lines[1:end]]
            body = "".join(lines[end + 1 :]).lstrip("\r\n")
            return Document(parse_front_matter(header, first_line=2), body)
    raise FrontMatterError("the front matter has no closing '---' line")


def parse_front_matter(lines: list[str], *, first_line: int = 1) -> dict[str, Value]:
    """Parse front matter lines (without the fences) into a mapping."""
    items: list[tuple[int, str, int]] = []
    for offset, raw in enumerate(lines):
        number = first_line + offset
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if raw[indent:indent + 1] == "\t" or "\t" in raw[:indent]:
            raise FrontMatterError("tabs cannot indent YAML; use spaces", line=number)
        items.append((indent, raw[indent:].rstrip(), number))
    if not items:
        return {}
    if items[0][0] != 0:
        raise FrontMatterError("the first key must not be indented", line=items[0][2])
    value, end = _parse_block(items, 0, 0)
    if end != len(items):
        raise FrontMatterError("unexpected indentation", line=items[end][2])
    if not isinstance(value, dict):
        raise FrontMatterError("front matter must be a mapping of keys", line=items[0][2])
    return value


def _is_list_item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


def _parse_block(items: list[tuple[int, str, int]], start: int, indent: int) -> tuple[Value, int]:
    """Parse the block starting at ``items[start]`` (all lines at exactly ``indent``)."""
    if _is_list_item(items[start][1]):
        return _parse_block_list(items, start, indent)
    return _parse_block_map(items, start, indent)


def _parse_block_list(
    items: list[tuple[int, str, int]], start: int, indent: int
) -> tuple[Value, int]:
    out: list[Value] = []
    i = start
    # A list ends at the first line that is not an item: a list written at its key's own
    # indentation is followed by the next key of the enclosing mapping.
    while i < len(items) and items[i][0] == indent and _is_list_item(items[i][1]):
        _, content, number = items[i]
        rest = content[1:].strip()
        if not rest:
            raise FrontMatterError("empty list items are not supported", line=number)
        out.append(_parse_inline(rest, number))
        i += 1
    return out, i


def _parse_block_map(
    items: list[tuple[int, str, int]], start: int, indent: int
) -> tuple[Value, int]:
    out: dict[str, Value] = {}
    i = start
    while i < len(items) and items[i][0] == indent:
        _, content, number = items[i]
        key, rest = _split_key(content, number)
        if key in out:
            raise FrontMatterError(f"duplicate key {key!r}", line=number)
        i += 1
        if rest:
            out[key] = _parse_inline(rest, number)
            continue
        # "key:" with nothing after it: the value is the indented block below
        # (a block list may also sit at the key's own indentation, as YAML allows).
        if i < len(items) and (
            items[i][0] > indent or (items[i][0] == indent and _is_list_item(items[i][1]))
        ):
            child_indent = items[i][0]
            out[key], i = _parse_block(items, i, child_indent)
        else:
            raise FrontMatterError(f"key {key!r} has no value", line=number)
    if i < len(items) and items[i][0] > indent:
        raise FrontMatterError("unexpected indentation", line=items[i][2])
    return out, i


def _split_key(content: str, number: int) -> tuple[str, str]:
    if content.startswith(("'", '"')):
        raise FrontMatterError("quoted keys are not supported", line=number)
    colon = content.find(":")
    while colon != -1 and colon + 1 < len(content) and content[colon + 1] != " ":
        colon = content.find(":", colon + 1)
    if colon <= 0:
        raise FrontMatterError(f"expected 'key: value', got {content!r}", line=number)
    key = content[:colon].strip()
    if not key or any(ch in key for ch in "[]{},#&*!|>'\"%@`"):
        raise FrontMatterError(f"bad key {key!r}", line=number)
    return key, _strip_comment(content[colon + 1 :]).strip()


def _strip_comment(text: str) -> str:
    """Drop a ``#`` comment that follows whitespace outside quotes."""
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"" and (i == 0 or text[i - 1] in " [{,:"):
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i]
        i += 1
    return text


def _parse_inline(text: str, number: int) -> Value:
    """A value written on one line: a flow collection, a quoted or a plain scalar."""
    text = _strip_comment(text).strip()
    parser = _FlowParser(text, number)
    if text[:1] in "[{'\"":
        value = parser.value(flow=True)
        parser.skip_spaces()
        if parser.pos != len(text):
            raise FrontMatterError(f"unexpected text after the value: {text[parser.pos:]!r}",
                                   line=number)
        return value
    _check_plain(text, number)
    return text


def _check_plain(text: str, number: int) -> None:
    if not text:
        raise FrontMatterError("empty value", line=number)
    if text[0] in _INDICATORS or text.startswith(("- ", "? ")):
        raise FrontMatterError(
            f"{text!r} starts with a YAML indicator; quote it ('{text}')", line=number
        )
    if ": " in text or text.endswith(":"):
        raise FrontMatterError(f"{text!r} contains ': '; quote it", line=number)


class _FlowParser:
    def __init__(self, text: str, number: int) -> None:
        self.text = text
        self.pos = 0
        self.number = number

    def fail(self, message: str) -> FrontMatterError:
        return FrontMatterError(message, line=self.number)

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self, *, flow: bool) -> Value:
        self.skip_spaces()
        ch = self.peek()
        if ch == "[":
            return self.sequence()
        if ch == "{":
            return self.mapping()
        if ch in ("'", '"'):
            return self.quoted()
        if not flow:
            raise self.fail("internal: plain scalars outside flow are handled by the caller")
        return self.plain(stops=",]}")

    def sequence(self) -> list[Value]:
        self.pos += 1
        out: list[Value] = []
        self.skip_spaces()
        if self.peek() == "]":
            self.pos += 1
            return out
        while True:
            out.append(self.value(flow=True))
            self.skip_spaces()
            ch = self.peek()
            self.pos += 1
            if ch == "]":
                return out
            if ch != ",":
                raise self.fail("expected ',' or ']' in a flow list")
            self.skip_spaces()
            if self.peek() == "]":  # a trailing comma, which YAML allows
                self.pos += 1
                return out

    def mapping(self) -> dict[str, Value]:
        self.pos += 1
        out: dict[str, Value] = {}
        self.skip_spaces()
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            self.skip_spaces()
            key = self.plain(stops=":,]}")
            if self.peek() != ":":
                raise self.fail(f"expected ':' after {key!r} in a flow mapping")
            self.pos += 1
            if key in out:
                raise self.fail(f"duplicate key {key!r}")
            out[key] = self.value(flow=True)
            self.skip_spaces()
            ch = self.peek()
            self.pos += 1
            if ch == "}":
                return out
            if ch != ",":
                raise self.fail("expected ',' or '}' in a flow mapping")

    def quoted(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if quote == "'" and ch == "'":
                if self.text[self.pos + 1 : self.pos + 2] == "'":
                    out.append("'")
                    self.pos += 2
                    continue
                self.pos += 1
                return "".join(out)
            if quote == '"' and ch == '"':
                self.pos += 1
                return "".join(out)
            if quote == '"' and ch == "\\":
                escape = self.text[self.pos + 1 : self.pos + 2]
                if escape not in _DOUBLE_ESCAPES:
                    raise self.fail(
                        f"unsupported escape '\\{escape}' in double quotes; "
                        "use single quotes for regexes with backslashes"
                    )
                out.append(_DOUBLE_ESCAPES[escape])
                self.pos += 2
                continue
            out.append(ch)
            self.pos += 1
        raise self.fail("unterminated quoted string")

    def plain(self, *, stops: str) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in stops:
            if self.text[self.pos] in "[{":
                raise self.fail("brackets inside a flow value must be quoted")
            self.pos += 1
        value = self.text[start : self.pos].strip()
        _check_plain(value, self.number)
        return value
