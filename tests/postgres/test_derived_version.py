"""The version of the PostgreSQL store's agent columns (``derive.DERIVED_VERSION``): stored
columns are derived again exactly when the version they name differs, so a release that
leaves them alone re-derives nothing and one that changes them must bump the version.

Pure (no server): a digest of the columns every kind of line of the index's fixed corpus
(tests/index/test_schema_version.py) becomes. Changing what a line becomes without a bump
fails here; after a bump, pin the digest the failure prints under the new version."""

from __future__ import annotations

import hashlib

from segue.postgres._derive import DERIVED_VERSION, fingerprint, values
from segue.postgres._rows import agent_of, people_of
from tests.index.test_schema_version import ARCHIVE, CHAT

#: digest of the corpus's agent columns, per version
PINNED = {1: "128c325c61ca7bdeeda9f0b583a145a7", 2: "99244c8c3511d0438fda2321fc2f2b40",
          3: "8bbfc855e68f376cbdb330e9d58c61be", 4: "0f4242c491ed8e61df8fac1a8efe1e95",
          5: "cafc431b810cbf979c8e4e9539c7ff13", 6: "1d26d9a5e98815d17dab1cf3f0d05c8a"}


def _digest() -> str:
    h = hashlib.sha256()
    off = 0
    for pos, raw in enumerate([*ARCHIVE, *CHAT]):
        agent = agent_of(raw, pos=pos, off=off, win=0, people=people_of(raw))
        h.update(repr(values(agent)).encode())
        off += len(raw) + 1
    return h.hexdigest()[:32]


def test_the_agent_columns_match_the_pinned_version() -> None:
    digest = _digest()
    assert PINNED.get(DERIVED_VERSION) == digest, (
        f"what lines become in the agent's columns changed (digest {digest}): bump "
        f"DERIVED_VERSION in segue/postgres/_derive.py and pin that digest under it here"
    )


def test_the_fingerprint_names_only_the_version() -> None:
    assert fingerprint() == f"segue-pg-derived/{DERIVED_VERSION}"
