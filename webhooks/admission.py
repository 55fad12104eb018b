"""``twistd platform-admission-webhook``: a validating rule and a mutating default.

Point a ValidatingWebhookConfiguration at ``/validate`` and a MutatingWebhookConfiguration
at ``/mutate``; both read one YAML rules file:

    rules:
    - kinds: [ConfigMap]              # the objects a rule applies to (all when absent)
      requireLabels: [team]           # /validate refuses an object without these labels
      message: every ConfigMap needs a team label
      defaults:                       # /mutate adds these fields where they are missing
        metadata:
          labels: {owner: nobody}

A refusal answers ``allowed: false`` with a 403 status and the rule's message; a default
is a JSONPatch of ``add`` operations, with a warning naming what was added.  Reviews of
``admission.platform.io`` (or ``admission.k8s.io``) ``v1`` and ``v1beta1`` are answered
in kind.  DELETE requests (no object) are always allowed.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
import yaml
from klein import Klein
from twisted.application.service import IService
from twisted.python import usage
from twisted.web.server import Request

from webhooks.serving import CallerCheck, ServingOptions, WebhookService, read_review

VERSIONS = tuple(
    f"{group}/{version}"
    for group in ("admission.platform.io", "admission.k8s.io")
    for version in ("v1", "v1beta1")
)
Obj = dict[str, Any]


class Options(ServingOptions):
    optParameters = [["rules-file", None, None, "YAML file of validating and mutating rules."]]


def load_rules(path: str | None) -> list[Obj]:
    if not path:
        return []
    with open(path, "rb") as f:
        rules = (yaml.safe_load(f) or {}).get("rules") or []
    for rule in rules:
        if not isinstance(rule, dict):
            raise usage.UsageError(f"rule {rule!r}: must be a mapping")
        if not isinstance(rule.get("defaults", {}), dict):
            raise usage.UsageError(f"rule {rule!r}: defaults must be a mapping")
    return rules


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def missing_fields(obj: Any, defaults: Obj, path: str = "") -> list[Obj]:
    """``add`` operations for the fields of ``defaults`` that ``obj`` lacks."""
    ops: list[Obj] = []
    for key, value in defaults.items():
        where = f"{path}/{_escape(str(key))}"
        if not isinstance(obj, dict) or key not in obj:
            ops.append({"op": "add", "path": where, "value": value})
        elif isinstance(value, dict):
            ops.extend(missing_fields(obj[key], value, where))
    return ops


class Admission:
    app = Klein()

    def __init__(self, rules: list[Obj], caller: CallerCheck) -> None:
        self.rules = rules
        self.caller = caller

    def _applying(self, obj: Obj | None) -> list[Obj]:
        if obj is None:
            return []
        return [r for r in self.rules if obj.get("kind") in r.get("kinds", [obj.get("kind")])]

    def validate(self, obj: Obj | None) -> Obj:
        for rule in self._applying(obj):
            assert obj is not None
            labels = obj.get("metadata", {}).get("labels") or {}
            absent = [name for name in rule.get("requireLabels") or [] if name not in labels]
            if absent:
                message = rule.get("message") or f"missing labels: {', '.join(absent)}"
                return {"allowed": False, "status": {"code": 403, "message": message}}
        return {"allowed": True}

    def mutate(self, obj: Obj | None) -> Obj:
        ops: list[Obj] = []
        for rule in self._applying(obj):
            ops.extend(missing_fields(obj, rule.get("defaults") or {}))
        if not ops:
            return {"allowed": True}
        added = ", ".join(op["path"] for op in ops)
        return {
            "allowed": True,
            "patchType": "JSONPatch",
            "patch": base64.b64encode(orjson.dumps(ops)).decode(),
            "warnings": [f"platform-admission-webhook added {added}"],
        }

    async def _answer(self, request: Request, mutating: bool) -> bytes:
        review = await read_review(request, self.caller, VERSIONS, "AdmissionReview", "request")
        if isinstance(review, bytes):
            return review
        asked = review["request"]
        obj = asked.get("object") if isinstance(asked.get("object"), dict) else None
        response = self.mutate(obj) if mutating else self.validate(obj)
        answer = {"apiVersion": review["apiVersion"], "kind": "AdmissionReview"}
        return orjson.dumps({**answer, "response": {"uid": asked.get("uid", ""), **response}})

    @app.route("/validate", methods=["POST"])
    async def validating(self, request: Request) -> bytes:
        return await self._answer(request, mutating=False)

    @app.route("/mutate", methods=["POST"])
    async def mutating(self, request: Request) -> bytes:
        return await self._answer(request, mutating=True)


def makeService(options: Options) -> IService:
    admission = Admission(load_rules(options["rules-file"]), CallerCheck(options["client-ca-file"]))
    return WebhookService(admission.app, options, "admission webhook")
