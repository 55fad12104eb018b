"""The token webhook authenticator: exchange, cache, and failures."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
import pytest_twisted

from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.webhook import TokenWebhook
from platform_api.client.kubeconfig import Connection


class Reply:
    def __init__(self, code: int, body: bytes) -> None:
        self.code, self.body = code, body

    async def content(self) -> bytes:
        return self.body


class FakeClient:
    def __init__(self, code: int = 200, status: Any = None, fail: bool = False) -> None:
        self.code, self.status, self.fail = code, status, fail
        self.sent: list[dict[str, Any]] = []

    async def post(self, url: str, data: bytes, headers: dict[str, str], timeout: float) -> Reply:
        self.sent.append(orjson.loads(data))
        if self.fail:
            raise ConnectionRefusedError("connection refused")
        body = (
            self.status if isinstance(self.status, bytes) else orjson.dumps({"status": self.status})
        )
        return Reply(self.code, body)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def webhook(client: FakeClient, clock: Clock | None = None) -> TokenWebhook:
    return TokenWebhook(
        Connection("https://hook/"), None, "v1", 120.0, clock or Clock(), client=client
    )


@pytest_twisted.ensureDeferred
async def test_authenticated_answers_are_cached() -> None:
    status = {"authenticated": True, "user": {"username": "jane", "groups": ["g"]}}
    client, clock = FakeClient(status=status), Clock()
    hook = webhook(client, clock)
    found = await hook.authenticate_token("t")
    assert found is not None and (found.user.name, found.user.groups) == ("jane", ("g",))
    assert client.sent == [
        {
            "apiVersion": "authentication.platform.io/v1",
            "kind": "TokenReview",
            "spec": {"token": "t"},
        }
    ]
    await hook.authenticate_token("t")
    assert len(client.sent) == 1
    clock.now = 121
    await hook.authenticate_token("t")
    assert len(client.sent) == 2


@pytest_twisted.ensureDeferred
async def test_rejections_carry_the_webhook_error() -> None:
    hook = webhook(FakeClient(status={"authenticated": False, "error": "token revoked"}))
    with pytest.raises(AuthenticationError, match="token revoked"):
        await hook.authenticate_token("t")
    assert (
        await webhook(FakeClient(status={"authenticated": False})).authenticate_token("t") is None
    )


@pytest_twisted.ensureDeferred
async def test_failures_are_errors_and_not_cached() -> None:
    client = FakeClient(fail=True)
    hook = webhook(client)
    for _ in range(2):
        with pytest.raises(AuthenticationError, match="webhook call failed"):
            await hook.authenticate_token("t")
    assert len(client.sent) == 2
    with pytest.raises(AuthenticationError, match="status 500"):
        await webhook(FakeClient(code=500, status={})).authenticate_token("t")
    with pytest.raises(AuthenticationError, match="malformed"):
        await webhook(FakeClient(status=b"not json")).authenticate_token("t")


@pytest_twisted.ensureDeferred
async def test_audiences_are_sent_and_intersected() -> None:
    def hook(status: dict[str, Any]) -> tuple[TokenWebhook, FakeClient]:
        client = FakeClient(status=status)
        return TokenWebhook(
            Connection("https://hook/"),
            None,
            "v1",
            120.0,
            Clock(),
            client=client,
            audiences=("api",),
        ), client

    user = {"authenticated": True, "user": {"username": "jane"}}
    agnostic, client = hook(user)
    found = await agnostic.authenticate_token("t")
    assert found is not None and found.audiences == ("api",)
    assert client.sent[0]["spec"]["audiences"] == ["api"]
    narrowed, _ = hook({**user, "audiences": ["other", "api"]})
    found = await narrowed.authenticate_token("t")
    assert found is not None and found.audiences == ("api",)
    foreign, _ = hook({**user, "audiences": ["other"]})
    with pytest.raises(AuthenticationError, match="token audiences is invalid"):
        await foreign.authenticate_token("t")


@pytest_twisted.ensureDeferred
async def test_the_review_group_is_the_servers() -> None:
    """kube's authentication.k8s.io under --serve-upstream-groups (apiserver/authn.py)."""
    client = FakeClient(status={"authenticated": False})
    hook = TokenWebhook(
        Connection("https://hook/"), None, "v1", client=client, review_group="authentication.k8s.io"
    )
    assert await hook.authenticate_token("t") is None
    assert client.sent[0]["apiVersion"] == "authentication.k8s.io/v1"
