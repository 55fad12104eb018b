"""The ConversionReview a CRD's webhook is sent: its group follows the server's names."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from twisted.internet.defer import succeed

from platform_api.apiextensions.webhookconversion import (
    REVIEW_GROUP,
    WebhookConverter,
)
from tests.admission.plugin_kit import run

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
