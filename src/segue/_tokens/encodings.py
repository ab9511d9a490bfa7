"""The bundled encodings: load a ``.tiktoken`` rank file shipped in the package, check it,
and build a real ``tiktoken.Encoding`` from it.

Invariants:

* Nothing here touches the network, a cache directory or the environment. tiktoken's own
  loaders (``get_encoding``, ``load_tiktoken_bpe``) are never called: they fetch from the
  network on a cache miss and delete a cached file whose hash is wrong, which would turn a
  tampered file into a silent download.
* A file is used only if the SHA-256 of its decompressed bytes equals OpenAI's published
  hash. Missing, unreadable, corrupt or tampered data raises :class:`EncodingError` naming
  the file; there is no fall-back.
* Each encoding is loaded at most once per process, and only when first asked for (the CLI's
  cold start pays for one encoding, not two).
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import threading
import zlib
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from segue._errors import EncodingError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from importlib.resources.abc import Traversable
    from pathlib import Path

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class EncodingSpec:
    """Everything needed to build one encoding, copied from tiktoken 0.14.0's
    ``tiktoken_ext/openai_public.py`` (patterns, special tokens, published hash)."""

    name: str
    filename: str
    sha256: str
    pat_str: str
    special_tokens: Mapping[str, int]


_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

SPECS: Mapping[str, EncodingSpec] = MappingProxyType(
    {
        "o200k_base": EncodingSpec(
            name="o200k_base",
            filename="o200k_base.tiktoken.gz",
            sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            pat_str=_O200K_PAT,
            special_tokens=MappingProxyType({ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
        ),
        "cl100k_base": EncodingSpec(
            name="cl100k_base",
            filename="cl100k_base.tiktoken.gz",
            sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            pat_str=_CL100K_PAT,
            special_tokens=MappingProxyType(
                {
                    ENDOFTEXT: 100257,
                    FIM_PREFIX: 100258,
                    FIM_MIDDLE: 100259,
                    FIM_SUFFIX: 100260,
                    ENDOFPROMPT: 100276,
                }
            ),
        ),
    }
)

ENCODING_NAMES: tuple[str, ...] = tuple(SPECS)


def spec(name: str) -> EncodingSpec:
    """The spec of a bundled encoding, or EncodingError naming the ones that exist."""
    try:
        return SPECS[name]
    except KeyError:
        raise EncodingError(
            f"unknown encoding {name!r}: bundled encodings are {', '.join(ENCODING_NAMES)}",
            code="unknown_encoding",
        ) from None


def package_data_dir() -> Traversable:
    """Where the rank files live inside the installed package."""
    return resources.files("segue._tokens").joinpath("data")


#: Tests point this at a directory holding a damaged copy; production never changes it.
data_dir: Callable[[], Traversable | Path] = package_data_dir


def read_rank_bytes(encoding_spec: EncodingSpec) -> bytes:
    """The decompressed rank file of ``encoding_spec``, verified against its published hash."""
    resource = data_dir().joinpath(encoding_spec.filename)
    try:
        compressed = resource.read_bytes()
    except FileNotFoundError:
        raise EncodingError(
            f"bundled tokenizer file {encoding_spec.filename} is missing from the segue "
            "package; reinstall segue (it is never downloaded)",
            code="encoding_missing",
        ) from None
    except OSError as exc:
        raise EncodingError(
            f"cannot read bundled tokenizer file {encoding_spec.filename}: {exc}",
            code="encoding_unreadable",
        ) from None
    try:
        raw = gzip.decompress(compressed)
    except (OSError, EOFError, zlib.error) as exc:
        raise EncodingError(
            f"bundled tokenizer file {encoding_spec.filename} is corrupt ({exc}); reinstall segue",
            code="encoding_tampered",
        ) from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != encoding_spec.sha256:
        raise EncodingError(
            f"bundled tokenizer file {encoding_spec.filename} fails its integrity check "
            f"(sha256 {digest}, expected {encoding_spec.sha256}); reinstall segue",
            code="encoding_tampered",
        )
    return raw


def parse_ranks(raw: bytes, filename: str) -> dict[bytes, int]:
    """Parse ``.tiktoken`` content: one ``<base64 token> <rank>`` per line."""
    fields = raw.split()
    tokens, ranks = fields[0::2], fields[1::2]
    if len(tokens) != len(ranks):
        # Unreachable for a file that passed the hash check; kept so a spec mistake names
        # the file instead of surfacing as a bare ValueError later.
        raise EncodingError(f"malformed tokenizer file {filename}: odd number of fields")
    try:
        # map/zip keep the 200k-line parse in C: about twice as fast as a per-line loop.
        return dict(zip(map(binascii.a2b_base64, tokens), map(int, ranks), strict=True))
    except (ValueError, binascii.Error) as exc:
        raise EncodingError(f"malformed tokenizer file {filename}: {exc}") from None


def build_encoding(name: str) -> Any:
    """A fresh ``tiktoken.Encoding`` for a bundled encoding (no caching; see :func:`get`)."""
    import tiktoken  # deferred: importing it costs ~20 ms that `segue --help` need not pay

    encoding_spec = spec(name)
    ranks = parse_ranks(read_rank_bytes(encoding_spec), encoding_spec.filename)
    try:
        return tiktoken.Encoding(
            encoding_spec.name,
            pat_str=encoding_spec.pat_str,
            mergeable_ranks=ranks,
            special_tokens=dict(encoding_spec.special_tokens),
        )
    except (ValueError, AssertionError) as exc:
        raise EncodingError(f"cannot build encoding {name}: {exc}") from None


_loaded: dict[str, Any] = {}
_lock = threading.Lock()


def get(name: str) -> Any:
    """The process-wide ``tiktoken.Encoding`` for ``name``, loaded on first use."""
    found = _loaded.get(name)
    if found is not None:
        return found
    with _lock:
        found = _loaded.get(name)
        if found is None:
            found = build_encoding(name)
            _loaded[name] = found
        return found


def loaded_names() -> tuple[str, ...]:
    """Which encodings this process has loaded so far (for tests of lazy loading)."""
    return tuple(_loaded)
