"""Issue case 4 (SPEC.md R38): commands run without the provider keys and segue's secrets, so
an approved ``env`` cannot write a key into the transcript; ``shell.passEnv`` lets one through."""

from __future__ import annotations

import json
from pathlib import Path

from tests.security.helpers import bash, environment, run, segue_cmd

KEY = "sk-test-0123456789abcdef"


def test_an_approved_env_never_shows_a_key(tmp_path: Path) -> None:
    env = environment(OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY + "a", MY_SERVICE_TOKEN=KEY + "t",
                      DB_PASSWORD=KEY + "p", SEGUE_VISIBLE="plain-value")
    result = run(tmp_path, [bash("env"), bash("echo \"[$OPENAI_API_KEY]\"")], approve="full",
                 env=env)
    listing, echoed = result.outputs
    assert "SEGUE_VISIBLE=plain-value" in listing["output"]  # the environment is there
    assert KEY not in listing["output"]
    assert echoed["output"] == "[]\n"
    on_disk = b"".join(p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file())
    assert KEY.encode() not in on_disk


def test_a_setting_passes_one_through_on_purpose(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    proc = segue_cmd(home, work, "settings", "set", "shell.passEnv", json.dumps(["NPM_TOKEN"]))
    assert proc.returncode == 0, proc.stderr
    env = environment(NPM_TOKEN="npm-visible", GH_TOKEN="gh-hidden")
    (out,) = run(tmp_path, [bash("echo \"$NPM_TOKEN/$GH_TOKEN\"")], approve="full",
                 env=env).outputs
    assert out["output"] == "npm-visible/\n"


def test_the_documented_names_and_pattern() -> None:
    from segue._tools.secrets import is_secret

    for name in ("OPENAI_API_KEY", "anthropic_api_key", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
                 "MY_APIKEY", "X_PASSWORD", "GITLAB_PAT", "NPM_AUTH", "PGPASSWORD",
                 "SEGUE_STORE_URL", "DATABASE_URL"):
        assert is_secret(name), name
    for name in ("PATH", "HOME", "LANG", "TERM", "PAGER", "EDITOR", "PYTHONPATH", "USER"):
        assert not is_secret(name), name
