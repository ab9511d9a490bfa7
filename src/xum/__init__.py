"""xum: an agent harness whose context engine never loses a conversation."""

from xum.errors import (
    ContextSignal,
    RuntimeFailure,
    UsageError,
    XumError,
)
from xum.messages import Part, Row, decode_row, encode_row, make_row

__all__ = [
    "ContextSignal",
    "Part",
    "Row",
    "RuntimeFailure",
    "UsageError",
    "XumError",
    "decode_row",
    "encode_row",
    "make_row",
]
