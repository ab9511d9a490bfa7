"""What a command's environment leaves out: the provider API keys and segue's own secrets
(SPEC.md R38). Pure.

``bash`` (and every program it starts) runs with the user's environment minus:

* the names in :data:`SECRET_NAMES` (the keys segue's providers read, the store's password);
* every name matching :data:`SECRET_PATTERN` (case-insensitive): names containing
  ``API_KEY``, ``APIKEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``CREDENTIAL``,
  ``PRIVATE_KEY`` or ``ACCESS_KEY``, or ending in ``_PAT`` or ``_AUTH``.

An approved ``env`` or ``echo $OPENAI_API_KEY`` would otherwise copy the key into the
transcript, the history index and every export. A variable the user means a command to see
is named in the ``shell.passEnv`` setting (a list of names): those pass through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

#: Variables removed by name (whatever the pattern says).
SECRET_NAMES = frozenset(
    {
        "OPENAI_API_KEY",
        "OPENAI_COMPATIBLE_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "PGPASSWORD",
        "PGPASSFILE",
        "SEGUE_STORE_URL",
        "DATABASE_URL",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "HF_TOKEN",
        "NPM_TOKEN",
    }
)
#: Variables removed because their name says they hold a secret.
SECRET_PATTERN = re.compile(
    r".*(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY).*|.*_(PAT|AUTH)",
    re.IGNORECASE,
)


def is_secret(name: str) -> bool:
    return name.upper() in SECRET_NAMES or SECRET_PATTERN.fullmatch(name) is not None


def command_environment(
    environ: Mapping[str, str], pass_through: Iterable[str] = ()
) -> dict[str, str]:
    """``environ`` without its secrets, except the names in ``pass_through``."""
    keep = set(pass_through)
    return {k: v for k, v in environ.items() if k in keep or not is_secret(k)}


def removed(environ: Mapping[str, str], pass_through: Iterable[str] = ()) -> list[str]:
    """The names :func:`command_environment` leaves out, sorted (for ``--help`` and tests)."""
    keep = set(pass_through)
    return sorted(k for k in environ if k not in keep and is_secret(k))
