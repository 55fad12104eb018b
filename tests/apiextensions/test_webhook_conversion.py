"""The ConversionReview a CRD's webhook is sent: its group follows the server's names."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from twisted.internet.defer import fail, succeed
from twisted.internet.error import ConnectionRefusedError

from platform_api.apiextensions.webhookconversion import (
    REVIEW_GROUP,
    WebhookConverter,
)
from platform_api.errors import StatusError
from tests.admission.plugin_kit import run
from tests.e2e.answers import unknown

CRD = {
    "spec": {
        "conversion": {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"url": "https://converter.example.com/convert"},
                "conversionReviewVersions": ["v2", "v1"],
            },
        }
    }
}


class Reply:
    code = 200

    def __init__(self, body: bytes) -> None:
        self.body = body

    def content(self) -> Any:
        return succeed(self.body)


class Client:
    """Answers each review as the sample webhook does: in kind, objects renamed."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def post(self, url: str, data: bytes, **kwargs: Any) -> Any:
        review = orjson.loads(data)
        self.sent.append(review)
        request = review["request"]
        objects = [{**o, "apiVersion": request["desiredAPIVersion"]} for o in request["objects"]]
        response = {
            "uid": request["uid"],
            "result": {"status": "Success"},
            "convertedObjects": objects,
        }
        answer = {
            "apiVersion": review["apiVersion"],
            "kind": "ConversionReview",
            "response": response,
        }
        return succeed(Reply(orjson.dumps(answer)))


@pytest.mark.parametrize("group", [REVIEW_GROUP, "apiextensions.k8s.io"])
def test_the_review_names_the_servers_group(group: str) -> None:
    converter = WebhookConverter(CRD, None, None, group)
    client = Client()
    converter._http = lambda connection: client  # type: ignore[method-assign]
    obj = {"apiVersion": "ex.com/v1", "kind": "W", "metadata": {"name": "a", "uid": "u"}}
    converted = run(converter.convert([obj], "ex.com/v2", obj))
    assert converted[0]["apiVersion"] == "ex.com/v2"
    assert [r["apiVersion"] for r in client.sent] == [f"{group}/v1"]  # v2 is no review version


class Failing:
    """A webhook that answers 500 with a plain body, or cannot be reached at all."""

    def __init__(self, refused: bool) -> None:
        self.refused = refused
        self.urls: list[str] = []

    def post(self, url: str, data: bytes, **kwargs: Any) -> Any:
        self.urls.append(url)
        if self.refused:
            return fail(ConnectionRefusedError())
        reply = Reply(b"boom")
        reply.code = 500
        return succeed(reply)


@pytest.mark.parametrize(
    ("refused", "why"),
    [
        (True, "dial tcp 127.0.0.1:9: connect: connection refused"),
        (False, 'an error on the server ("boom") has prevented the request from succeeding'),
    ],
)
def test_a_failed_call_is_kubes_bare_500(refused: bool, why: str) -> None:
    """As the reference answered with its webhook down: the converter's own error (no
    reason), the call worded by Go's client with the deadline kube sends."""
    crd = copy.deepcopy(CRD)
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"] = "https://127.0.0.1:9/convert"
    converter = WebhookConverter(crd, None, None)
    client = Failing(refused)
    converter._http = lambda connection: client  # type: ignore[method-assign]
    obj = {"apiVersion": "ex.com/v1", "kind": "W", "metadata": {"name": "a"}}
    with pytest.raises(StatusError) as caught:
        run(converter.convert([obj], "ex.com/v2", obj))
    url = "https://127.0.0.1:9/convert?timeout=30s"
    assert client.urls == [url]
    prefix = "conversion webhook for ex.com/v1, Kind=W failed: "
    if refused:
        prefix += f'Post "{url}": '
    assert caught.value.status() == unknown(prefix + why)
