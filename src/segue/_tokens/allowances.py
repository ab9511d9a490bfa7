"""Fixed token allowances for what is not plain text: message framing, tool wrappers,
media, and the slack JSON needs. Pure constants and arithmetic.

Every number here is an estimate chosen on the high side (R17: allowances are estimates, a
provider's overflow error stays the backstop), and each says where it comes from.
"""

from __future__ import annotations

import re

#: Per message: OpenAI's chat format spends 3 tokens (``<|start|>role<|message|>`` …
#: ``<|end|>``) plus 1 for a name (OpenAI cookbook, "How to count tokens with tiktoken");
#: Anthropic's turn markers are of the same size. 4 covers both.
MESSAGE_FRAMING = 4
#: Per request: the assistant reply is primed with 3 tokens (same source).
REQUEST_FRAMING = 3
#: Per tool call or tool result: the wrapper, the call id and the function-name markup.
#: OpenAI renders a call as ``functions.NAME`` plus a JSON-argument envelope, Anthropic as a
#: ``tool_use`` block with an id (~24 characters of base62); 12 covers the id's tokens.
TOOL_CALL_FRAMING = 12
TOOL_RESULT_FRAMING = 12
#: Per advertised tool schema, on top of its JSON text, and once for the tools preamble
#: (OpenAI's ``namespace functions {`` block, Anthropic's tool-use system prompt, which
#: Anthropic documents at 313–346 tokens for Claude models when tools are present).
TOOL_SCHEMA_FRAMING = 12
TOOLS_PREAMBLE = 350

#: An image: Anthropic counts (width × height) / 750 and rescales anything above ~1.15
#: megapixels, so one image costs at most ~1,600 tokens; OpenAI's high-detail GPT-4o images
#: cost at most 85 + 170 × 6 = 1,105. Without the dimensions, the larger bound.
IMAGE = 1600
#: Any other genuine media (PDF, audio, video): at least this much, or one token per
#: 16 bytes of payload when that is larger (a PDF page is ~1,500–3,000 tokens of text plus
#: its page image; 16 bytes per token over-covers typical 30–60 KB pages).
OTHER_MEDIA_MIN = 3000
OTHER_MEDIA_BYTES_PER_TOKEN = 16

_DATA_URL = re.compile(r"data:[^;,]*(;[^,]*)?,", re.ASCII)


def media_allowance(media_type: str | None, payload_chars: int | None) -> int:
    """Tokens for one genuine media part. ``payload_chars`` is the length of its base64
    payload (or None when it is a remote URL of unknown size)."""
    if media_type is not None and media_type.lower().startswith("image/"):
        return IMAGE
    if payload_chars is None:
        return OTHER_MEDIA_MIN
    payload_bytes = payload_chars * 3 // 4
    return max(OTHER_MEDIA_MIN, -(-payload_bytes // OTHER_MEDIA_BYTES_PER_TOKEN))


def data_url_payload_chars(url: str) -> int | None:
    """Length of a data URL's payload, or None when ``url`` is not a data URL."""
    match = _DATA_URL.match(url)
    if match is None:
        return None
    return len(url) - match.end()


#: Bytes after which a pretty-printer puts a newline and indentation.
_JSON_STRUCTURE = (b"{", b"}", b"[", b"]", b",")
#: Bytes whose tokenization changes with spacing or escaping.
_JSON_MARKS = (b'"', b":", b"\\")


def json_allowance(json_bytes: bytes) -> int:
    """Extra tokens for JSON beyond the tokens of its compact UTF-8 text (R19).

    A provider or SDK may re-serialize with indentation (a newline and spaces after every
    ``{ [ ,`` and before every ``} ]``), spaces after ``:``, escape non-ASCII as
    ``\\uXXXX`` (Python's ``json.dumps`` default) and split punctuation runs differently.
    So: one token per structural byte, half a token per quote, colon or backslash, and one
    token per non-ASCII byte (an escaped code point costs 3–4 tokens where its UTF-8 form
    costs about one, and has 2–4 UTF-8 bytes). Checked in tests against ``json.dumps``
    defaults and ``indent=2``.
    """
    structure = sum(json_bytes.count(mark) for mark in _JSON_STRUCTURE)
    marks = sum(json_bytes.count(mark) for mark in _JSON_MARKS)
    ascii_only = json_bytes.decode("utf-8", "surrogatepass").encode("ascii", "ignore")
    return structure + -(-marks // 2) + len(json_bytes) - len(ascii_only)
