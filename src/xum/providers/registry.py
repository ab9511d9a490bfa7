"""From a model string to a provider.

Only the offline ``scripted`` provider ships in this version. ``openai:``, ``anthropic:`` and
``openai-compatible:`` model strings are recognized (so settings can name them) but creating
one is a clear :class:`~xum.errors.UsageError`: there is no half-working adapter behind them.
"""

from __future__ import annotations

from pathlib import Path

from xum.errors import UsageError
from xum.providers.base import Provider, RequestCounter
from xum.providers.model_ref import parse_model
from xum.providers.scripted import ScriptedProvider


class ProviderUnavailable(UsageError):
    code = "provider_unavailable"


def create_provider(
    model: str,
    *,
    counter: RequestCounter | None = None,
    state_dir: Path | None = None,
    cwd: Path | None = None,
) -> Provider:
    """The provider for ``model`` (``provider:name``).

    ``counter`` measures requests for providers that must report usage themselves (the
    scripted one). ``state_dir`` makes a scripted provider's position persist across
    processes (pass e.g. ``XUM_HOME/providers``); without it each process starts the script
    from its first response. A relative ``scripted:`` path is taken from ``cwd`` (default:
    the current directory).
    """
    ref = parse_model(model)
    if ref.provider == "scripted":
        path = Path(ref.name)
        if not path.is_absolute():
            path = (cwd if cwd is not None else Path.cwd()) / path
        return ScriptedProvider.from_file(path, counter=counter, state_dir=state_dir,
                                          model=model)
    raise ProviderUnavailable(
        f"the {ref.provider!r} provider is not available in this version of xum "
        f"(model {model!r}); use scripted:PATH for an offline run"
    )
