"""``twistd platform-token-webhook``: answers TokenReview from a YAML users file.

    users:
    - token: 31ada4fd-adec-460c-809a-9e56ceb75269
      username: jane
      uid: "1001"
      groups: [developers]
      extra: {scopes: [read]}

An unknown token is ``authenticated: false``; the request's apiVersion (v1 or
v1beta1 of ``authentication.platform.io``) is answered in kind.
"""

from __future__ import annotations

from typing import Any

import orjson
import yaml
from klein import Klein
from twisted.application.service import IService
from twisted.python import usage
from twisted.web.server import Request

from webhooks.serving import CallerCheck, ServingOptions, WebhookService, read_review

GROUP = "authentication.platform.io"
VERSIONS = tuple(  # kube's group too: a server under --serve-upstream-groups sends it
    f"{group}/{version}"
    for group in (GROUP, "authentication.k8s.io")
    for version in ("v1", "v1beta1")
)


class Options(ServingOptions):
    optParameters = [["users-file", None, None, "YAML file of token users, required."]]

    def postOptions(self) -> None:
        super().postOptions()
        if not self["users-file"]:
            raise usage.UsageError("--users-file is required")


def load_users(path: str) -> dict[str, dict[str, Any]]:
    with open(path, "rb") as f:
        doc = yaml.safe_load(f) or {}
    users: dict[str, dict[str, Any]] = {}
    for entry in doc.get("users") or []:
        user: dict[str, Any] = {"username": str(entry["username"])}
        if entry.get("uid"):
            user["uid"] = str(entry["uid"])
        if entry.get("groups"):
            user["groups"] = [str(g) for g in entry["groups"]]
        if entry.get("extra"):
            user["extra"] = {str(k): [str(x) for x in v] for k, v in entry["extra"].items()}
        users[str(entry["token"])] = user
    return users


class TokenReviewer:
    app = Klein()

    def __init__(self, users: dict[str, dict[str, Any]], caller: CallerCheck) -> None:
        self.users = users
        self.caller = caller

    @app.route("/", branch=True, methods=["POST"])
    async def review(self, request: Request) -> bytes:
        review = await read_review(request, self.caller, VERSIONS, "TokenReview")
        if isinstance(review, bytes):
            return review
        user = self.users.get(str(review["spec"].get("token")))
        status: dict[str, Any] = {"authenticated": user is not None}
        if user is not None:
            status["user"] = user
        version = review["apiVersion"]
        return orjson.dumps({"apiVersion": version, "kind": "TokenReview", "status": status})


def makeService(options: Options) -> IService:
    reviewer = TokenReviewer(
        load_users(options["users-file"]), CallerCheck(options["client-ca-file"])
    )
    return WebhookService(reviewer.app, options, "token webhook")
