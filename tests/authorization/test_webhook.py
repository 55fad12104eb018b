"""The authorization webhook client: the review it sends, caching, failures."""

from __future__ import annotations

from typing import Any

import orjson
import pytest_twisted

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.webhook import WebhookAuthorizer, review_of
from platform_api.client.kubeconfig import Connection

CAROL = UserInfo("carol", "u1", ("dev",), {"scopes": ("a",)})


class Reply:
    def __init__(self, code: int, status: Any) -> None:
        self.code, self.body = code, orjson.dumps({"status": status})

    async def content(self) -> bytes:
        return self.body


class Client:
    def __init__(self, status: Any, code: int = 200) -> None:
        self.status, self.code, self.calls = status, code, 0

    async def post(self, *args: Any, **kwargs: Any) -> Reply:
        self.calls += 1
        return Reply(self.code, self.status)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def get_pods() -> Attributes:
    return Attributes(
        user=CAROL,
        verb="get",
        resource_request=True,
        namespace="ns",
        api_version="v1",
        resource="pods",
        name="p",
    )


def test_review_shapes() -> None:
    assert review_of(get_pods(), "v1beta1")["spec"] == {
        "resourceAttributes": {
            "namespace": "ns",
            "verb": "get",
            "version": "v1",
            "resource": "pods",
            "name": "p",
        },
        "user": "carol",
        "group": ["dev"],
        "uid": "u1",
        "extra": {"scopes": ["a"]},
    }
    path = Attributes(user=UserInfo("x"), verb="get", resource_request=False, path="/healthz")
    assert review_of(path, "v1") == {
        "apiVersion": "authorization.platform.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}, "user": "x"},
    }


@pytest_twisted.ensureDeferred
async def test_answers_are_cached_by_decision() -> None:
    clock = Clock()
    allowed = Client({"allowed": True})
    hook = WebhookAuthorizer(Connection("https://h/"), None, "v1", 300, 30, clock, allowed)
    assert await hook.authorize(get_pods()) == (Decision.ALLOW, "")
    clock.now = 299
    await hook.authorize(get_pods())
    assert allowed.calls == 1
    denied = Client({"allowed": False, "denied": True, "reason": "no"})
    hook = WebhookAuthorizer(Connection("https://h/"), None, "v1", 300, 30, clock, denied)
    assert await hook.authorize(get_pods()) == (Decision.DENY, "no")
    clock.now += 31
    await hook.authorize(get_pods())
    assert denied.calls == 2


@pytest_twisted.ensureDeferred
async def test_failures_have_no_opinion_and_are_not_cached() -> None:
    broken = Client({}, code=500)
    hook = WebhookAuthorizer(Connection("https://h/"), None, "v1", 300, 30, Clock(), broken)
    decision, reason = await hook.authorize(get_pods())
    assert (decision, reason) == (Decision.NO_OPINION, "webhook authorizer failed: status 500")
    await hook.authorize(get_pods())
    assert broken.calls == 2
