"""``twistd platform-authz-webhook``: answers SubjectAccessReview from a YAML policy.

    rules:
    - user: jane            # each of user, group, verb, resource, namespace and
      verb: get             # nonResourcePath is optional ("*" or absent: any)
      resource: configmaps
      decision: allow       # allow, deny, or noOpinion
    - group: contractors
      resource: secrets
      decision: deny

The first matching rule decides; none matching is no opinion.  The request's
apiVersion (v1 or v1beta1 of ``authorization.platform.io``) is answered in kind.
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

GROUP = "authorization.platform.io"
VERSIONS = tuple(  # kube's group too: a server under --serve-upstream-groups sends it
    f"{group}/{version}"
    for group in (GROUP, "authorization.k8s.io")
    for version in ("v1", "v1beta1")
)
DECISIONS = ("allow", "deny", "noOpinion")


class Options(ServingOptions):
    optParameters = [["policy-file", None, None, "YAML policy file, required."]]

    def postOptions(self) -> None:
        super().postOptions()
        if not self["policy-file"]:
            raise usage.UsageError("--policy-file is required")


def load_rules(path: str) -> list[dict[str, Any]]:
    with open(path, "rb") as f:
        rules = (yaml.safe_load(f) or {}).get("rules") or []
    for rule in rules:
        if rule.get("decision") not in DECISIONS:
            raise usage.UsageError(f"rule {rule}: decision must be one of {DECISIONS}")
    return rules


def _matches(rule: dict[str, Any], spec: dict[str, Any]) -> bool:
    groups = spec.get("groups") or spec.get("group") or []
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    attrs = resource or non_resource or {}
    checks = [
        ("user", lambda v: v == spec.get("user")),
        ("group", lambda v: v in groups),
        ("verb", lambda v: v == attrs.get("verb")),
        ("resource", lambda v: resource is not None and v == resource.get("resource")),
        ("namespace", lambda v: resource is not None and v == resource.get("namespace")),
        ("nonResourcePath", lambda v: non_resource is not None and v == non_resource.get("path")),
    ]
    return all(rule.get(k) in (None, "*") or test(rule[k]) for k, test in checks)


class Authorizer:
    app = Klein()

    def __init__(self, rules: list[dict[str, Any]], caller: CallerCheck) -> None:
        self.rules = rules
        self.caller = caller

    def decide(self, spec: dict[str, Any]) -> dict[str, Any]:
        for rule in self.rules:
            if _matches(rule, spec):
                decision = rule["decision"]
                status: dict[str, Any] = {"allowed": decision == "allow"}
                if decision == "deny":
                    status["denied"] = True
                status["reason"] = rule.get("reason") or f"policy rule: {decision}"
                return status
        return {"allowed": False}

    @app.route("/", branch=True, methods=["POST"])
    async def review(self, request: Request) -> bytes:
        review = await read_review(request, self.caller, VERSIONS, "SubjectAccessReview")
        if isinstance(review, bytes):
            return review
        status = self.decide(review["spec"])
        answer = {"apiVersion": review["apiVersion"], "kind": "SubjectAccessReview"}
        return orjson.dumps({**answer, "status": status})


def makeService(options: Options) -> IService:
    authorizer = Authorizer(
        load_rules(options["policy-file"]), CallerCheck(options["client-ca-file"])
    )
    return WebhookService(authorizer.app, options, "authorization webhook")
