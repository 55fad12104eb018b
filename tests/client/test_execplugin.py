"""The exec credential plugin: configuration rules, caching, and the plugin's answers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_twisted

from platform_api.client.execplugin import ExecConfig, ExecCredentials, ExecError

V1 = "client.authentication.platform.io/v1"


def config(**block: Any) -> ExecConfig:
    return ExecConfig.parse(
        {"command": "sh", "apiVersion": V1, "interactiveMode": "Never", **block}, "."
    )


class Runner:
    def __init__(self, *answers: Any, code: int = 0) -> None:
        self.answers, self.code = list(answers), code
        self.envs: list[dict[str, str]] = []

    async def __call__(
        self, executable: str, args: Any, env: dict[str, str]
    ) -> tuple[bytes, bytes, int]:
        self.envs.append(env)
        answer = self.answers.pop(0)
        return (answer if isinstance(answer, bytes) else orjson.dumps(answer)), b"boom", self.code


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_configuration_rules(tmp_path: Path) -> None:
    with pytest.raises(ExecError, match="interactiveMode must be specified"):
        ExecConfig.parse({"command": "x", "apiVersion": V1}, ".")
    beta = ExecConfig.parse({"command": "x", "apiVersion": V1 + "beta1"}, ".")
    assert beta.interactive_mode == "IfAvailable"
    with pytest.raises(ExecError, match="invalid apiVersion"):
        ExecConfig.parse({"command": "x", "apiVersion": "v1"}, ".")
    missing = ExecConfig.parse(
        {
            "command": "./nope",
            "apiVersion": V1,
            "interactiveMode": "Never",
            "installHint": "get it",
        },
        str(tmp_path),
    )
    with pytest.raises(ExecError, match=re.escape("executable ./nope not found\n\nget it")):
        missing.executable()


@pytest_twisted.ensureDeferred
async def test_tokens_are_cached_until_expiry_or_invalidation() -> None:
    answer = {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "status": {"token": "t1", "expirationTimestamp": "1970-01-01T00:01:40Z"},
    }
    runner, clock = Runner(answer, answer, answer), Clock()
    creds = ExecCredentials(
        config(env=[{"name": "X", "value": "1"}], provideClusterInfo=True),
        {"server": "https://s"},
        clock,
        runner,
    )
    assert (await creds.get()).token == "t1"
    await creds.get()
    assert len(runner.envs) == 1
    info = orjson.loads(runner.envs[0]["PLATFORM_EXEC_INFO"])
    assert info == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {"interactive": False, "cluster": {"server": "https://s"}},
    }
    assert runner.envs[0]["X"] == "1"
    clock.now = 101
    await creds.get()
    creds.invalidate()
    await creds.get()
    assert len(runner.envs) == 3


@pytest_twisted.ensureDeferred
async def test_bad_answers() -> None:
    cases = [
        ({"apiVersion": V1 + "beta1", "status": {"token": "t"}}, "plugin returned version"),
        ({"apiVersion": V1, "status": {}}, "didn't return a token or cert/key pair"),
        ({"apiVersion": V1, "status": {"clientKeyData": "k"}}, "must both be set"),
        (b"not json", "decoding stdout"),
    ]
    for answer, message in cases:
        with pytest.raises(ExecError, match=message):
            await ExecCredentials(config(), None, Clock(), Runner(answer)).get()
    with pytest.raises(ExecError, match="failed with exit code 3: boom"):
        await ExecCredentials(config(), None, Clock(), Runner(b"", code=3)).get()
    with pytest.raises(ExecError, match="cannot support interactive mode"):
        await ExecCredentials(config(interactiveMode="Always"), None, Clock(), Runner()).get()
