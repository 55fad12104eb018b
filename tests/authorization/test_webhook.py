"""The authorization webhook client: the review it sends, caching, failures."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
import pytest_twisted
from twisted.internet import defer, task

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.webhook import WebhookAuthorizer, review_of
from platform_api.cel import DYN_MAP, Environment
from platform_api.client.kubeconfig import Connection

CAROL = UserInfo("carol", "u1", ("dev",), {"scopes": ("a",)})
REVIEW = {"apiVersion": "authorization.platform.io/v1", "kind": "SubjectAccessReview"}


class Reply:
    def __init__(self, code: int, status: Any, body: bytes | None = None) -> None:
        self.code = code
        self.body = orjson.dumps({**REVIEW, "status": status}) if body is None else body

    async def content(self) -> bytes:
        return self.body


class Client:
    def __init__(self, status: Any, code: int = 200, body: bytes | None = None) -> None:
        self.status, self.code, self.body, self.calls = status, code, body, 0

    async def post(self, *args: Any, **kwargs: Any) -> Reply:
        self.calls += 1
        return Reply(self.code, self.status, self.body)


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


class Down:
    calls = 0

    async def post(self, *args: Any, **kwargs: Any) -> Reply:
        self.calls += 1
        raise ConnectionRefusedError("Connection was refused by other side: 111")


class Slow:
    """Never answers; records that the call was abandoned."""

    def __init__(self) -> None:
        self.calls, self.cancelled = 0, 0

    def post(self, *args: Any, **kwargs: Any) -> defer.Deferred[Reply]:
        self.calls += 1

        def cancel(d: defer.Deferred[Reply]) -> None:
            self.cancelled += 1

        return defer.Deferred(cancel)


def hook_with(client: Any, policy: str, reactor: Any = None, **kwargs: Any) -> WebhookAuthorizer:
    return WebhookAuthorizer(
        Connection("https://h/"),
        reactor,
        "v1",
        300,
        30,
        Clock(),
        client,
        failure_policy=policy,
        **kwargs,
    )


POLICIES = [("NoOpinion", Decision.NO_OPINION), ("Deny", Decision.DENY)]


@pytest.mark.parametrize(("policy", "decision"), POLICIES)
@pytest_twisted.ensureDeferred
async def test_a_webhook_that_is_down_follows_the_failure_policy(
    policy: str, decision: Decision
) -> None:
    down = Down()
    hook = hook_with(down, policy)
    assert await hook.authorize(get_pods()) == (
        decision,
        "webhook authorizer failed: Connection was refused by other side: 111",
    )
    await hook.authorize(get_pods())
    assert down.calls == 2  # not cached


@pytest.mark.parametrize(("policy", "decision"), POLICIES)
def test_a_slow_webhook_times_out(policy: str, decision: Decision) -> None:
    clock, slow = task.Clock(), Slow()
    hook = hook_with(slow, policy, clock, timeout=5.0)
    answer = defer.ensureDeferred(hook.authorize(get_pods()))
    clock.advance(4.9)
    assert not answer.called
    clock.advance(0.1)
    assert slow.cancelled == 1
    result = answer.result  # fired synchronously by the clock
    assert result == (decision, "webhook authorizer failed: timed out after 5s")
    again = defer.ensureDeferred(hook.authorize(get_pods()))
    assert slow.calls == 2  # the failure was not cached
    clock.advance(5)
    assert again.called


MALFORMED = [
    (b"<html>oops</html>", "malformed SubjectAccessReview: not JSON"),
    (
        b'{"kind": "TokenReview", "status": {"allowed": true}}',
        "malformed SubjectAccessReview: kind is 'TokenReview'",
    ),
    (b'{"allowed": true}', "malformed SubjectAccessReview: kind is None"),
    (b'{"kind": "SubjectAccessReview"}', "malformed SubjectAccessReview: no status"),
    (
        b'{"kind": "SubjectAccessReview", "status": [true]}',
        "malformed SubjectAccessReview: no status",
    ),
]


@pytest.mark.parametrize(("policy", "decision"), POLICIES)
@pytest.mark.parametrize(("body", "error"), MALFORMED)
@pytest_twisted.ensureDeferred
async def test_malformed_answers_follow_the_failure_policy(
    policy: str, decision: Decision, body: bytes, error: str
) -> None:
    client = Client(None, body=body)
    hook = hook_with(client, policy)
    assert await hook.authorize(get_pods()) == (decision, f"webhook authorizer failed: {error}")
    await hook.authorize(get_pods())
    assert client.calls == 2


@pytest_twisted.ensureDeferred
async def test_denied_wins_over_allowed() -> None:
    hook = hook_with(Client({"allowed": True, "denied": True, "reason": "both"}), "NoOpinion")
    assert await hook.authorize(get_pods()) == (Decision.DENY, "both")


def conditions(*sources: str) -> list[Any]:
    env = Environment({"request": DYN_MAP})
    return [env.compile(s) for s in sources]


NOT_SYSTEM = "!request.user.startsWith('system:')"
IN_NS = "request.resourceAttributes.namespace == 'ns'"
NO_KEY = "request.nonResourceAttributes.path == '/x'"  # a resource request has none


@pytest.mark.parametrize(("policy", "decision"), POLICIES)
@pytest_twisted.ensureDeferred
async def test_match_conditions(policy: str, decision: Decision) -> None:
    client = Client({"allowed": True})
    # All true: the webhook is asked.
    hook = hook_with(client, policy, match_conditions=conditions(NOT_SYSTEM, IN_NS))
    assert await hook.authorize(get_pods()) == (Decision.ALLOW, "")
    assert client.calls == 1
    # One false: skipped without a call, whatever the others say (even an error).
    for sources in ((IN_NS, "request.user == 'bob'"), (NO_KEY, "request.user == 'bob'")):
        hook = hook_with(client, policy, match_conditions=conditions(*sources))
        assert await hook.authorize(get_pods()) == (Decision.NO_OPINION, "")
    assert client.calls == 1
    # An error and no false: the failure policy, without a call.
    hook = hook_with(client, policy, match_conditions=conditions(IN_NS, NO_KEY))
    result, reason = await hook.authorize(get_pods())
    assert result is decision and client.calls == 1
    assert reason.startswith(
        "webhook authorizer failed: cel evaluation error: expression "
        f"'{NO_KEY}' resulted in error: "
    )


@pytest_twisted.ensureDeferred
async def test_match_conditions_see_the_v1_spec_whatever_the_version_sent() -> None:
    client = Client({"allowed": True})
    hook = WebhookAuthorizer(
        Connection("https://h/"),
        None,
        "v1beta1",
        client=client,
        match_conditions=conditions("'dev' in request.groups"),
    )
    assert await hook.authorize(get_pods()) == (Decision.ALLOW, "")


def test_the_review_group_is_the_servers() -> None:
    """kube's authorization.k8s.io under --serve-upstream-groups (apiserver/authz.py)."""
    review = review_of(get_pods(), "v1", "authorization.k8s.io")
    assert review["apiVersion"] == "authorization.k8s.io/v1"
