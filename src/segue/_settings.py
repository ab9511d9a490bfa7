"""User settings: ``SEGUE_HOME/settings.json`` (SPEC.md R1, R2, §3).

Keys are dotted names. On disk they are grouped by their first segment, so
``experiments.tokenBudget`` and ``threshold.openai:gpt-4.1`` are written as::

    {"experiments": {"tokenBudget": true}, "threshold": {"openai:gpt-4.1": 80}}

A file written by hand with flat keys (``{"experiments.tokenBudget": true}``) reads the same;
a key given both ways with different values is an error. Keys segue does not know are kept on
every rewrite (a newer segue may have written them) but cannot be set from the command line.

Invariants:

* Reading tolerates a missing file (all defaults) and nothing else: malformed JSON, a
  non-object, or a known key with a bad value is a :class:`~segue._errors.SettingsError` naming
  the file and key. There is no silent fall-back to defaults over a broken file.
* Writing is atomic (temp file in the same directory, fsync, ``os.replace``, fsync of the
  directory) and a read-modify-write holds a lock file beside it, so two concurrent
  ``segue settings set`` never lose each other's change.
* Thresholds are integers 0-100 in steps of 5 (R2); 100 turns automatic handling off.

The catalogue of keys is assembled here from what each subsystem declares
(:mod:`segue._providers.keys`, :mod:`segue.plugins._keys`, with the types of
:mod:`segue._keyspec`) and the engine's own keys below. Nothing under this module imports it:
the providers take the values (:class:`segue._providers.registry.SettingsView`).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from segue._context.budget import DEFAULT_THRESHOLD
from segue._errors import FileError, LockTimeout, SettingsError, UsageError
from segue._fsutil import atomic_write, check_regular, file_error, keep_private, read_regular
from segue._keyspec import FamilySpec, KeySpec, Validator, bool_value, choice, minutes, percent

# The providers and the plugins declare their own keys (``segue._providers.keys``,
# ``segue.plugins._keys``); they are assembled here when first asked for. The validators'
# modules (approval modes, MCP servers, model strings, encodings, the lock) are imported
# where they are used: every command reads the settings, few need all of them.
if TYPE_CHECKING:
    from segue.plugins._config import PluginSpec

THRESHOLD_OFF = 100
THRESHOLD_PREFIX = "threshold."
#: Declared by the providers (:mod:`segue._providers.keys`), repeated for the callers of this
#: module; a test keeps them equal.
CONTEXT_WINDOW_PREFIX = "contextWindow."
ENCODING_PREFIX = "encoding."
LOCK_TIMEOUT_SECONDS = 10.0
#: A settings file is a few hundred bytes; anything past this is not one (or /dev/zero).
MAX_SETTINGS_BYTES = 1 << 20


def _threshold(key: str, value: Any) -> int:
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or not 0 <= value <= THRESHOLD_OFF
        or value % 5
    ):
        raise SettingsError(
            f"{key} must be an integer percent from 0 to 100 in steps of 5 "
            f"(100 turns automatic rollover off), not {value!r}",
            key=key,
        )
    return value


def _store_url(key: str, value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"postgres(ql)?://\S*", value):
        raise SettingsError(f"{key} must be a postgresql:// URL, not {value!r}", key=key)
    return value


def _names(key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and v and "=" not in v for v in value
    ):
        raise SettingsError(f"{key} must be a list of environment variable names", key=key)
    return list(value)


def _mcp_servers(key: str, value: Any) -> dict[str, Any]:
    from segue._mcp.config import parse_servers

    parse_servers(key, value)  # SettingsError when malformed; the file keeps the raw object
    return dict(value)


def _approval(key: str, value: Any) -> str:
    from segue._policy.approval import MODES

    return choice(key, value, MODES)


#: The keys of the engine itself: the context budget, the store, the MCP servers, the shell
#: tool's environment, the approval mode.
_CORE: dict[str, KeySpec] = {
    "experiments.tokenBudget": KeySpec(
        bool_value, False, "roll over to fresh context windows instead of compacting"),
    "threshold.default": KeySpec(
        _threshold, DEFAULT_THRESHOLD, "context threshold (%) for models without their own"),
    "idleCompactionMinutes": KeySpec(
        minutes, None, "compact a session idle this long (unset: never)"),
    "approximateCounting": KeySpec(
        bool_value, False, "count usage approximately (the size guards stay exact)"),
    "store.url": KeySpec(
        _store_url, None, "PostgreSQL store for every workspace (unset: JSONL files)"),
    "shell.passEnv": KeySpec(
        _names, None, "secret-looking environment variables bash may see anyway (unset: "
        "API keys, tokens and passwords are removed from commands' environment)"),
    "mcp.servers": KeySpec(
        _mcp_servers, None, "MCP servers whose tools agents get as mcp__<server>__<tool>: "
        "{name: {command, args, env, cwd, timeout, trusted} | {url, timeout, trusted}}"),
    "mcp.toolSearchPercent": KeySpec(
        percent, 10, "share of the window (%) tool schemas may take before MCP schemas are "
        "deferred behind tool_search"),
    "approval": KeySpec(
        _approval, None, "approval mode for tools that change the machine: ask (unset: ask in "
        "chat, deny in run), auto-edit, full or deny"),
}
#: The order ``segue settings`` lists the keys in.
_ORDER = (
    "model", "experiments.tokenBudget", "threshold.default", "idleCompactionMinutes",
    "approximateCounting", "openai-compatible.baseUrl", "fallbackModel", "store.url",
    "plugins", "mcp.servers", "mcp.toolSearchPercent", "anthropic.cacheTtl", "shell.passEnv",
    "approval",
)


@functools.cache
def _assemble() -> tuple[dict[str, KeySpec], dict[str, FamilySpec]]:
    """Every settable key (each subsystem's declarations) and the per-model families."""
    from segue._providers import keys as provider_keys
    from segue.plugins import _keys as plugin_keys

    declared = {**_CORE, **provider_keys.KEYS, **plugin_keys.KEYS}
    rank = {key: n for n, key in enumerate(_ORDER)}
    keys = dict(sorted(declared.items(), key=lambda item: rank.get(item[0], len(rank))))
    families = {
        THRESHOLD_PREFIX: FamilySpec(
            _threshold, lambda: "that model's threshold (%), 0-100 in steps of 5"),
        **provider_keys.FAMILIES,
    }
    return keys, families


def _spec(key: str) -> KeySpec | None:
    core = _CORE.get(key)
    return core if core is not None else _assemble()[0].get(key)


def __getattr__(name: str) -> Any:
    # ``KEYS``: every settable key except the per-model ones; ``MODEL_KEYS``: the per-model
    # families ``<prefix><provider:model>`` and their values' validators.
    if name == "KEYS":
        return _assemble()[0]
    if name == "MODEL_KEYS":
        return {prefix: family.validate for prefix, family in _assemble()[1].items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def model_key_help() -> dict[str, str]:
    """What each per-model family sets, for ``segue settings set --help`` (built when asked:
    the encodings' names come from the token counter, which start-up does not load)."""
    return {prefix: family.help() for prefix, family in _assemble()[1].items()}


def key_families() -> dict[str, str]:
    """Every settable key and per-model family (``threshold.<provider:model>``) with its
    help, in the order ``segue settings set --help`` lists them."""
    keys, families = _assemble()
    out = {key: spec.help for key, spec in keys.items()}
    out.update({f"{prefix}<provider:model>": family.help() for prefix, family in families.items()})
    return out


def _validator(key: str) -> Validator:
    """The validator of ``key``; SettingsError for a key segue does not know."""
    spec = _spec(key)
    if spec is not None:
        return spec.validate
    keys, families = _assemble()
    for prefix, family in families.items():
        if key.startswith(prefix):
            from segue._providers.model_ref import parse_model

            try:
                parse_model(key.removeprefix(prefix))
            except UsageError as exc:
                raise SettingsError(f"{key}: {exc.message}", key=key) from None
            return family.validate
    known = ", ".join([*keys, *(f"{prefix}<provider:model>" for prefix in families)])
    raise SettingsError(f"unknown setting {key!r}; known settings: {known}", key=key)


def check_key(key: str) -> None:
    """SettingsError (a UsageError) naming the known keys when segue does not know ``key``."""
    _validator(key)


def anchor_model_path(key: str, value: Any, cwd: Path) -> Any:
    """``value`` with a relative ``scripted:`` path made absolute against ``cwd`` (and ``~``
    expanded), when ``key`` holds a model: a setting applies from every directory, so it must
    not depend on the one it was typed in. Anything else is returned unchanged."""
    spec = _spec(key)
    if spec is None or not isinstance(value, str):
        return value
    from segue._providers.keys import model_string

    if spec.validate is not model_string:
        return value
    from segue._providers.model_ref import parse_model

    try:
        ref = parse_model(value)
    except UsageError:
        return value  # refused by validation, with its own message
    if ref.provider != "scripted":
        return value
    path = Path(ref.name).expanduser()
    if not path.is_absolute():
        path = cwd / path
    return f"scripted:{os.path.normpath(path)}"


def is_known(key: str) -> bool:
    if key in _CORE:
        return True
    keys, families = _assemble()
    return key in keys or key.startswith(tuple(families))


def validate(key: str, value: Any) -> Any:
    """The value, checked for ``key``; SettingsError (a UsageError) when it is not valid."""
    return _validator(key)(key, value)


@dataclass(frozen=True)
class Settings:
    """Flat ``key -> value`` of what the file holds (defaults are not stored)."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        spec = _spec(key)
        return spec.default if spec is not None else None

    @property
    def token_budget(self) -> bool:
        return bool(self.get("experiments.tokenBudget"))

    @property
    def approximate_counting(self) -> bool:
        return bool(self.get("approximateCounting"))

    @property
    def idle_compaction_minutes(self) -> int | None:
        value = self.get("idleCompactionMinutes")
        return value if isinstance(value, int) else None

    @property
    def plugins(self) -> tuple[PluginSpec, ...]:
        from segue.plugins._keys import plugin_specs

        return plugin_specs(self.values)

    def with_value(self, key: str, value: Any) -> Settings:
        """A copy with ``key`` set (validated); ``None`` removes it (back to the default)."""
        values = dict(self.values)
        if value is None:
            if key not in values:
                _validator(key)  # an unknown key is an error even when removing it
            values.pop(key, None)
        else:
            values[key] = validate(key, value)
        return Settings(values)

    def effective(self) -> dict[str, Any]:
        """Every known key with its value or default, then everything else in the file."""
        out: dict[str, Any] = {key: self.get(key) for key in _assemble()[0]}
        out.update(sorted(self.values.items()))
        return out


def effective_threshold(settings: Settings, model: str | None) -> int:
    """The model's own threshold, else ``threshold.default``, else 70 (R2)."""
    if model is not None:
        own = settings.values.get(THRESHOLD_PREFIX + model)
        if own is not None:
            return int(own)
    return int(settings.get("threshold.default"))


def parse_cli_value(text: str) -> Any:
    """A value typed on the command line: JSON where it parses (``true``, ``70``, ``null``),
    else the text itself (so ``http://localhost:8080/v1`` needs no quotes)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


# -- file form ---------------------------------------------------------------------------------


def from_obj(obj: Any, path: Path | None = None) -> Settings:
    """Settings from the decoded file, flat or grouped keys, validated."""
    where = f"{path}: " if path is not None else ""
    if not isinstance(obj, dict):
        raise SettingsError(f"{where}settings must be a JSON object", path=path)
    flat: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if key in flat and flat[key] != value:
            raise SettingsError(f"{where}{key} is given twice with different values",
                                path=path, key=key)
        flat[key] = value

    for key, value in obj.items():
        # One level of grouping: {"experiments": {"tokenBudget": true}}. An empty object has
        # nothing to flatten and is kept as it is.
        if isinstance(value, dict) and value and "." not in key:
            for sub, sub_value in value.items():
                put(f"{key}.{sub}", sub_value)
        else:
            put(key, value)
    for key, value in flat.items():
        if is_known(key):
            try:
                validate(key, value)
            except SettingsError as exc:
                raise SettingsError(f"{where}{exc.message}", path=path, key=key) from None
    return Settings(flat)


def to_obj(settings: Settings) -> dict[str, Any]:
    """Grouped by first segment; keys with no dot (and unknown grouped values) stay flat."""
    out: dict[str, Any] = {}
    for key, value in sorted(settings.values.items()):
        group, dot, rest = key.partition(".")
        if dot and (group not in out or isinstance(out[group], dict)):
            out.setdefault(group, {})[rest] = value
        else:
            out[key] = value
    return out


def settings_path(home: Path) -> Path:
    return home / "settings.json"


def unknown_note(key: str) -> str:
    """Why ``key`` in the file does nothing, with the key it is probably a typo of."""
    import difflib

    keys, families = _assemble()
    near = difflib.get_close_matches(key, [*keys, *families], n=1)
    return f"{key!r} is not a setting segue knows" + (
        f" (did you mean {near[0]!r}?)" if near else "")


def unknown_keys(settings: Settings) -> list[str]:
    """Keys of the file that segue does not know (and ignores)."""
    return sorted(key for key in settings.values if not is_known(key))


def _stderr_note(text: str) -> None:
    import sys

    sys.stderr.write(f"segue: note: {text}\n")
    sys.stderr.flush()


#: Where a settings file's unknown keys are reported (once per file and process).
unknown_keys_note: Callable[[str], None] = _stderr_note
_reported: set[Path] = set()


def _report_unknown(path: Path, settings: Settings) -> None:
    unknown = unknown_keys(settings)
    if not unknown or path in _reported:
        return
    _reported.add(path)
    for key in unknown:
        unknown_keys_note(f"{path}: {unknown_note(key)}; it is ignored "
                          f"(`segue settings unset {key}` removes it)")


def load_settings(path: Path, *, report_unknown: bool = True) -> Settings:
    """Read ``path``; a missing file means all defaults. Keys segue does not know are kept
    (a newer version's, a typo) and, unless ``report_unknown`` is off, reported once."""
    try:
        # No link followed, no FIFO or device read forever, no file of absurd size loaded.
        raw = read_regular(path, max_size=MAX_SETTINGS_BYTES)
    except FileError as exc:
        raise SettingsError(exc.message, path=path) from None
    if raw is None:
        return Settings()
    try:
        obj = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise SettingsError(f"{path} is not valid JSON: nested too deeply", path=path) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsError(f"{path} is not valid JSON: {exc}", path=path) from None
    settings = from_obj(obj, path)
    if report_unknown:
        _report_unknown(path, settings)
    return settings


def save_settings(path: Path, settings: Settings) -> None:
    data = json.dumps(to_obj(settings), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_atomic(path, data.encode("utf-8"))


def update_settings(path: Path, change: Callable[[Settings], Settings]) -> Settings:
    """Read, change and write back under the settings lock; returns what was written."""
    from filelock import FileLock
    from filelock import Timeout as FileLockTimeout

    lock_path = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        check_regular(lock_path, "lock")
        with FileLock(lock_path, timeout=LOCK_TIMEOUT_SECONDS, mode=0o600):
            updated = change(load_settings(path, report_unknown=False))
            save_settings(path, updated)
            return updated
    except FileLockTimeout:
        raise LockTimeout(lock_path, LOCK_TIMEOUT_SECONDS) from None
    except OSError as exc:
        where = Path(exc.filename) if exc.filename else path
        raise file_error(exc, where, "write") from None


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically and durably, creating its directory first. A settings
    file that is not a regular file (a symlink, FIFO, device) is refused, never replaced."""
    check_regular(path, "replace")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        keep_private(path.parent)  # R38: the home is 0700 (settings.json itself is 0600)
        atomic_write(path, data)
    except OSError as exc:  # a full disk, a read-only home: the machine, not the settings
        raise file_error(exc, path, "write") from None
