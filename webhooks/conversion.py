"""``twistd platform-conversion-webhook``: converts custom resources between versions.

A CRD with ``conversion.strategy: Webhook`` sends ConversionReviews here.  This sample
moves fields whose path differs between versions, from a YAML file:

    renames:
    - kind: CronTab
      fields:                # the same field's path in each version
        v1: spec.cronSpec
        v2: spec.schedule

Every other field is kept; ``apiVersion`` becomes the desired one.  A review of
``apiextensions.platform.io/v1`` (or ``v1beta1``), or of ``apiextensions.k8s.io`` (what a
server under ``--serve-upstream-groups`` or kube sends), is answered in kind.
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

VERSIONS = tuple(
    f"{group}/{version}"
    for group in ("apiextensions.platform.io", "apiextensions.k8s.io")
    for version in ("v1", "v1beta1")
)
Obj = dict[str, Any]


class Options(ServingOptions):
    optParameters = [["renames-file", None, None, "YAML file of per-version field paths."]]


def load_renames(path: str | None) -> list[Obj]:
    if not path:
        return []
    with open(path, "rb") as f:
        renames = (yaml.safe_load(f) or {}).get("renames") or []
    for rule in renames:
        if not isinstance(rule.get("fields"), dict):
            raise usage.UsageError(f"rename {rule}: fields must map versions to paths")
    return renames


def _pop(obj: Obj, path: str) -> tuple[bool, Any]:
    *parents, last = path.split(".")
    node: Any = obj
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and last in node:
        return True, node.pop(last)
    return False, None


def _put(obj: Obj, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = obj
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


class Converter:
    app = Klein()

    def __init__(self, renames: list[Obj], caller: CallerCheck) -> None:
        self.renames = renames
        self.caller = caller

    def convert(self, obj: Obj, desired: str) -> Obj:
        current = str(obj.get("apiVersion", "")).rsplit("/", 1)[-1]
        wanted = desired.rsplit("/", 1)[-1]
        out = {**obj, "apiVersion": desired}
        for rule in self.renames:
            if rule.get("kind") not in (None, obj.get("kind")):
                continue
            paths = rule["fields"]
            if current in paths and wanted in paths:
                found, value = _pop(out, paths[current])
                if found:
                    _put(out, paths[wanted], value)
        return out

    @app.route("/", branch=True, methods=["POST"])
    async def review(self, request: Request) -> bytes:
        review = await read_review(request, self.caller, VERSIONS, "ConversionReview", "request")
        if isinstance(review, bytes):
            return review
        asked = review["request"]
        desired = asked.get("desiredAPIVersion", "")
        objects = [orjson.loads(orjson.dumps(o)) for o in asked.get("objects") or []]
        response = {
            "uid": asked.get("uid", ""),
            "convertedObjects": [self.convert(o, desired) for o in objects],
            "result": {"status": "Success"},
        }
        answer = {"apiVersion": review["apiVersion"], "kind": "ConversionReview"}
        return orjson.dumps({**answer, "response": response})


def makeService(options: Options) -> IService:
    converter = Converter(
        load_renames(options["renames-file"]), CallerCheck(options["client-ca-file"])
    )
    return WebhookService(converter.app, options, "conversion webhook")
