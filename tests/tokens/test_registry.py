"""Model → encoding registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from segue import UsageError, resolve_model
from segue._errors import EncodingError, UnknownModelError
from segue._tokens.registry import TokenModel, resolve


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("openai:gpt-4o", "o200k_base"),
        ("openai:gpt-4o-mini-2024-07-18", "o200k_base"),
        ("openai:gpt-4.1-nano", "o200k_base"),
        ("openai:gpt-5", "o200k_base"),
        ("openai:o3-mini", "o200k_base"),
        ("openai:gpt-4", "cl100k_base"),
        ("openai:gpt-4-turbo", "cl100k_base"),
        ("openai:gpt-3.5-turbo-0125", "cl100k_base"),
        ("openai-compatible:gpt-oss-20b", "o200k_base"),
    ],
)
def test_openai_models_are_exact(model: str, encoding: str) -> None:
    resolved = resolve(model)
    assert (resolved.encoding, resolved.exact, resolved.factor) == (encoding, True, 1.0)
    assert resolved.family == "openai"


@pytest.mark.parametrize(
    ("model", "family", "factor"),
    [
        ("anthropic:claude-sonnet-4-5", "claude", 1.5),
        ("anthropic:claude-3-5-haiku-latest", "claude", 1.5),
        ("anthropic:claude-opus-4-7", "claude", 2.0),
        ("openai-compatible:gemini-2.5-pro", "gemini", 1.35),
        ("openai-compatible:deepseek-chat", "deepseek", 1.35),
        ("openai-compatible:Qwen/Qwen2.5-Coder-32B-Instruct", "qwen", 1.35),
        ("openai-compatible:meta-llama/Llama-3.1-8B-Instruct", "llama", 1.35),
        ("openai-compatible:llama2", "llama", 1.5),
        ("openai-compatible:mistral-small", "mistral", 1.5),
    ],
)
def test_other_families_are_estimates(model: str, family: str, factor: float) -> None:
    resolved = resolve(model)
    assert (resolved.family, resolved.factor, resolved.exact) == (family, factor, False)
    assert resolved.scale(100) == round(100 * factor)
    assert resolved.scale(1) == 2  # rounded up, never down


@pytest.mark.parametrize(
    "model",
    ["openai:text-davinci-003", "anthropic:gemini-pro", "openai-compatible:my-model", "gpt-4o"],
)
def test_unknown_models_are_errors(model: str) -> None:
    with pytest.raises(UnknownModelError):
        resolve(model)


def test_unknown_provider_is_an_error() -> None:
    with pytest.raises(UnknownModelError, match="unknown provider"):
        resolve("bedrock:claude-sonnet-4-5")


def test_naming_an_encoding_makes_unknown_models_countable() -> None:
    assert resolve("openai-compatible:my-model", "cl100k_base") == TokenModel(
        "openai-compatible:my-model", "custom", "cl100k_base", 1.0, True
    )
    assert resolve(None, "o200k_base").exact
    overridden = resolve("anthropic:claude-sonnet-4-5", "o200k_base")
    assert (overridden.family, overridden.factor, overridden.exact) == ("claude", 1.0, True)
    with pytest.raises(EncodingError):
        resolve("openai:gpt-4o", "p50k_base")


def test_scripted_model_uses_its_files_encoding(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"contextWindow": 1000, "encoding": "cl100k_base"}))
    resolved = resolve_model(f"scripted:{script}")
    assert (resolved.encoding, resolved.exact, resolved.family) == ("cl100k_base", True, "scripted")
    script.write_text(json.dumps({"contextWindow": 1000}))
    with pytest.raises(UnknownModelError, match="encoding"):
        resolve_model(f"scripted:{script}")
    with pytest.raises(UsageError, match="cannot read"):
        resolve_model(f"scripted:{tmp_path / 'missing.json'}")
    with pytest.raises(UnknownModelError):
        resolve(f"scripted:{script}")  # the pure registry never reads files


def test_nothing_named_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        resolve_model(None)
