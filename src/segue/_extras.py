"""How to install an optional part of segue (an extra), said the same way everywhere.

A hint names this project and both ways to get the extra: editable from a checkout, and from
a release. Never a bare package name, which may belong to a stranger (the project's old name
did: it installs an unrelated tool).
"""

from __future__ import annotations


def install_hint(extra: str) -> str:
    return (
        f"install segue with its {extra!r} extra — from a checkout: "
        f"pip install -e '.[{extra}]'; from a release: pip install 'segue[{extra}]'"
    )
