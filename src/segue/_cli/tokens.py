"""``segue tokens``: count tokens offline, and show what calibration has observed.

Thin edge: parse, call :mod:`segue._tokens`, print. Errors are segue errors; the root group
turns them into one line and an exit code.
"""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING

import click

from segue._errors import UsageError
from segue._tokens import DEFAULT_MODEL, ENCODING_NAMES, calibration_file, count_text, resolve_model

if TYPE_CHECKING:
    from segue._cli.context import CliContext


@click.group("tokens")
def tokens() -> None:
    """Token accounting with the model's real encoding, offline."""


@tokens.command("count")
@click.option(
    "-m",
    "--model",
    default=None,
    help=f"Model as provider:name (default {DEFAULT_MODEL}, counted exactly with o200k_base).",
)
@click.option(
    "--encoding",
    type=click.Choice(ENCODING_NAMES),
    default=None,
    help="Count with this bundled encoding (needed for models segue does not know).",
)
@click.option("--json", "as_json", is_flag=True, help='Print {"tokens", "encoding", "exact"}.')
@click.argument("file", required=False, default="-", type=click.File("rb"))
def count(model: str | None, encoding: str | None, as_json: bool, file: IO[bytes]) -> None:
    """Count the tokens of FILE (or standard input, or "-").

    The text is counted as plain text: no chat framing, and special-token text such as
    <|endoftext|> counts as the characters it is. "exact" is true when the encoding is the
    model's own (OpenAI models, scripted models, an explicit --encoding); other families
    are estimated from o200k_base times a documented, conservative factor.
    """
    if model is None and encoding is None:
        model = DEFAULT_MODEL
    data = file.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"input is not UTF-8 text ({exc})") from None
    token_model = resolve_model(model, encoding)
    result = count_text(text, token_model)
    if as_json:
        click.echo(json.dumps(result.to_json()))
        return
    if token_model.exact:
        click.echo(f"{result.tokens} tokens ({result.encoding}, exact)")
    else:
        click.echo(
            f"{result.tokens} tokens (estimate: {result.encoding} × {token_model.factor:g} "
            f"for {token_model.model})"
        )


@tokens.command("calibration")
@click.option("--json", "as_json", is_flag=True, help="Print the stored calibration as JSON.")
@click.pass_obj
def calibration(obj: CliContext, as_json: bool) -> None:
    """Show provider-reported input tokens against segue's estimates, per model family.

    A ratio above 1 means the provider counted more than segue estimated.
    """
    stored = calibration_file.load(obj.home)
    if as_json:
        click.echo(json.dumps(stored.to_obj()))
        return
    if not stored.families:
        click.echo(f"no calibration samples yet ({calibration_file.path_for(obj.home)})")
        return
    click.echo(
        f"{'family':<12} {'samples':>8} {'estimated':>12} {'reported':>12} "
        f"{'ratio':>7} {'min':>7} {'max':>7}"
    )
    for name, stats in sorted(stored.families.items()):
        ratio = stats.ratio
        click.echo(
            f"{name:<12} {stats.samples:>8} {stats.estimated:>12} {stats.reported:>12} "
            f"{(ratio if ratio is not None else 0.0):>7.3f} {stats.min_ratio:>7.3f} "
            f"{stats.max_ratio:>7.3f}"
        )
