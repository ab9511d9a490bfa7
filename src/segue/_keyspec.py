"""What a setting key is: its validator, default and help, and the value checks most keys use.

A subsystem declares the keys it reads beside its own code (``segue._providers.keys``,
``segue.plugins._keys``) with these types; :mod:`segue._settings` assembles the declarations
into the catalogue and owns the file. This module knows no subsystem: it sits at the bottom
of the layer map, so a subsystem declares its keys without importing the settings file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from segue._errors import SettingsError

#: ``(key, value) -> value``: the value checked for ``key`` (SettingsError when it is not valid).
Validator = Callable[[str, Any], Any]


@dataclass(frozen=True)
class KeySpec:
    """One settable key."""

    validate: Validator
    default: Any
    help: str


@dataclass(frozen=True)
class FamilySpec:
    """Per-model keys ``<prefix><provider:model>``: ``validate`` checks the value; ``help`` is
    built when asked (it may name what only a heavier module knows)."""

    validate: Validator
    help: Callable[[], str]


def bool_value(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(f"{key} must be true or false, not {value!r}", key=key)
    return value


def minutes(key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SettingsError(f"{key} must be a whole number of minutes >= 1, not {value!r}",
                            key=key)
    return value


def tokens(key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1024:
        raise SettingsError(f"{key} must be a number of tokens >= 1024, not {value!r}", key=key)
    return value


def http_url(key: str, value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"https?://\S+", value):
        raise SettingsError(f"{key} must be an http:// or https:// URL, not {value!r}", key=key)
    return value


def percent(key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 100:
        raise SettingsError(f"{key} must be an integer percent from 1 to 100, not {value!r}",
                            key=key)
    return value


def choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise SettingsError(f"{key} must be one of {', '.join(choices)}, not {value!r}", key=key)
    return str(value)


def one_of(choices: tuple[str, ...]) -> Validator:
    """A validator accepting exactly ``choices``."""
    return lambda key, value: choice(key, value, choices)
