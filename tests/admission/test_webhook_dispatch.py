"""The webhook dispatchers against in-process answers: order, reinvocation, failure
policies, dry runs and bad answers (real webhook processes are in tests/e2e)."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
import pytest_twisted

from platform_api import errors
from platform_api.admission.webhook.caller import CallError
from platform_api.admission.webhook.dispatch import WebhookAdmission
from platform_api.admission.webhook.hooks import compile_configuration
from platform_api.apiserver.metrics import REGISTRY
from tests.admission.test_webhook_matching import request

Obj = dict[str, Any]
RULES = [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]


def hook(name: str, **extra: Any) -> Obj:
    return {
        "name": name,
        "clientConfig": {"url": f"https://{name}/"},
        "rules": RULES,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


class Source:
    def __init__(self, hooks: list[Obj], mutating: bool) -> None:
        self._hooks = compile_configuration(
            {"metadata": {"name": "c"}, "webhooks": hooks}, mutating
        )

    def hooks(self) -> list:
        return self._hooks


class Caller:
    """Answers by host: a function of the review's request, or an exception."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def call(
        self, config: Obj, review: Obj, timeout: int, plugin: str, *_trace: object
    ) -> Obj:
        host = config["url"].split("//")[1].rstrip("/")
        self.calls.append(host)
        answer = self.answers[host]
        if isinstance(answer, Exception):
            raise answer
        response = {"uid": review["request"]["uid"], **answer(review["request"])}
        return {"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response}


def patch(*ops: Obj) -> Obj:
    return {
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": base64.b64encode(orjson.dumps(list(ops))).decode(),
    }


def plugin(mutating: list[Obj], validating: list[Obj], caller: Caller) -> WebhookAdmission:
    return WebhookAdmission(
        Source(mutating, True),  # type: ignore[arg-type]
        Source(validating, False),  # type: ignore[arg-type]
        caller,  # type: ignore[arg-type]
        lambda name: {},
    )


def deployment() -> Obj:
    return {"metadata": {"name": "web", "labels": {}}, "spec": {"replicas": 1}}


@pytest_twisted.ensureDeferred
async def test_mutations_apply_in_order_and_ifneeded_reinvokes() -> None:
    seen: list[Obj] = []

    def first(req: Obj) -> Obj:
        seen.append(req["object"]["metadata"]["labels"])
        return patch({"op": "add", "path": "/metadata/labels/a", "value": "1"})

    caller = Caller(
        {
            "first": first,
            "second": lambda req: patch({"op": "add", "path": "/metadata/labels/b", "value": "2"}),
        }
    )
    hooks = [hook("first", reinvocationPolicy="IfNeeded"), hook("second")]
    req = request(object=deployment())
    admission = plugin(hooks, [], caller)
    first = await admission.mutate(req)
    assert req.object["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert caller.calls == ["first", "second"]
    # "second" changed the object after "first" saw it: in kube's second round of the
    # chain's mutations "first" runs once more, and only it.
    assert first.changed
    await admission.mutate(req, again=first)
    assert caller.calls == ["first", "second", "first"]
    assert seen == [{}, {"a": "1", "b": "2"}]


@pytest_twisted.ensureDeferred
async def test_a_second_round_reinvokes_what_changed_since() -> None:
    """An IfNeeded webhook whose own output nothing changed runs again in the second
    round only when something (a policy run again) changed the object since."""
    caller = Caller(
        {"only": lambda req: patch({"op": "add", "path": "/metadata/labels/a", "value": "1"})}
    )
    admission = plugin([hook("only", reinvocationPolicy="IfNeeded")], [], caller)
    req = request(object=deployment())
    first = await admission.mutate(req)
    await admission.mutate(req, again=first)
    assert caller.calls == ["only"]
    req.object["metadata"]["labels"]["policy"] = "again"
    await admission.mutate(req, again=first)
    assert caller.calls == ["only", "only"]


@pytest_twisted.ensureDeferred
async def test_failure_policies() -> None:
    down = CallError('failed to call webhook: Post "https://down/?timeout=10s": EOF')
    caller = Caller({"down": down})
    req = request(object=deployment())
    await plugin([], [hook("down", failurePolicy="Ignore")], caller).validate(req)
    with pytest.raises(errors.StatusError) as info:
        await plugin([], [hook("down")], caller).validate(req)
    assert (info.value.code, info.value.message) == (
        500,
        'Internal error occurred: failed calling webhook "down": failed to call webhook: '
        'Post "https://down/?timeout=10s": EOF',
    )


@pytest_twisted.ensureDeferred
async def test_a_dry_run_never_reaches_a_webhook_with_side_effects() -> None:
    caller = Caller({"effects": lambda req: {"allowed": True}})
    req = request(object=deployment(), dry_run=True)
    with pytest.raises(errors.StatusError) as info:
        await plugin([], [hook("effects", sideEffects="Some")], caller).validate(req)
    assert (info.value.code, info.value.reason, info.value.message) == (
        400,
        "BadRequest",
        'admission webhook "effects" does not support dry run',
    )
    assert caller.calls == []
    await plugin([], [hook("effects", sideEffects="NoneOnDryRun")], caller).validate(req)
    assert caller.calls == ["effects"]


@pytest_twisted.ensureDeferred
async def test_the_first_refusal_in_order_answers() -> None:
    caller = Caller(
        {
            "ok": lambda req: {"allowed": True, "warnings": ["careful"]},
            "no": lambda req: {"allowed": False, "status": {"code": 403, "message": "nope"}},
            "never": lambda req: {"allowed": False},
        }
    )
    req = request(object=deployment())
    with pytest.raises(errors.StatusError) as info:
        await plugin([], [hook("ok"), hook("no"), hook("never")], caller).validate(req)
    assert info.value.message == 'admission webhook "no" denied the request: nope'
    assert req.warnings == ["careful"]


@pytest_twisted.ensureDeferred
async def test_bad_answers() -> None:
    req = request(object=deployment())
    garbage = Caller({"bad": lambda req: {"allowed": True, "patch": "%%%"}})
    with pytest.raises(errors.StatusError) as info:
        await plugin([], [hook("bad")], garbage).validate(req)
    assert info.value.message.startswith(
        'Internal error occurred: failed calling webhook "bad": received invalid webhook '
        "response: illegal base64 data"
    )
    deleting = request(operation="DELETE", object=None, old_object=deployment())
    patching = Caller({"p": lambda req: patch({"op": "add", "path": "/x", "value": 1})})
    with pytest.raises(errors.StatusError) as info:
        await plugin([hook("p")], [], patching).mutate(deleting)
    assert info.value.message == (
        'Internal error occurred: admission webhook "p" attempted to modify the object, '
        "which is not supported for this operation"
    )


@pytest_twisted.ensureDeferred
async def test_a_patched_object_is_read_back_into_its_type() -> None:
    """kube decodes the patched JSON into the versioned Go type (leniently): a field it
    does not know is dropped, a null map value is the empty string, and what the type
    cannot hold is an internal error in Go's words (as kube's reference answered)."""

    async def patched(*ops: Obj, first: Obj | None = None) -> Obj | errors.StatusError:
        req = request(object=first or deployment())
        caller = Caller({"p": lambda review: patch(*ops)})
        try:
            await plugin([hook("p")], [], caller).mutate(req)
        except errors.StatusError as e:
            return e
        assert req.object is not None
        return req.object

    out = await patched(
        {"op": "add", "path": "/spec/nope", "value": 1},
        {"op": "add", "path": "/metadata/labels/x", "value": None},
    )
    assert isinstance(out, dict)
    assert (out["apiVersion"], out["kind"], out["spec"]) == (
        "apps/v1",
        "Deployment",
        {"replicas": 1},
    )
    assert out["metadata"]["labels"] == {"x": ""}
    error = await patched({"op": "add", "path": "/metadata/labels/n", "value": 2})
    assert isinstance(error, errors.StatusError)
    assert (error.code, error.reason, error.message) == (
        500,
        "InternalError",
        "Internal error occurred: json: cannot unmarshal number into Go struct field "
        "ObjectMeta.metadata.labels of type string",
    )
    # two errors: kube's decoder meets the patched document as the patch library wrote
    # it (the root decoded, so its keys sorted: metadata before spec, whatever the
    # object's own order) and reports the first
    error = await patched(
        {"op": "add", "path": "/spec/replicas", "value": "x"},
        {"op": "add", "path": "/metadata/labels/n", "value": 2},
        first={"spec": {"replicas": 1}, "metadata": {"name": "web", "labels": {}}},
    )
    assert isinstance(error, errors.StatusError)
    assert error.message == (
        "Internal error occurred: json: cannot unmarshal number into Go struct field "
        "ObjectMeta.metadata.labels of type string"
    )
    error = await patched({"op": "add", "path": "/kind", "value": "Nope"})
    assert isinstance(error, errors.StatusError)
    assert error.message == (
        'Internal error occurred: no kind "Nope" is registered for version "apps/v1" in scheme '
        '"pkg/api/legacyscheme/scheme.go:30"'
    )
    # Another kind that decodes fails the conversion into the resource's internal type:
    # kube's bare 500, no reason.
    error = await patched({"op": "add", "path": "/kind", "value": "StatefulSet"})
    assert isinstance(error, errors.StatusError)
    assert (error.code, error.reason, error.message) == (
        500,
        "",
        "converting (v1.StatefulSet) to (apps.Deployment): unknown conversion",
    )


def _sample(family: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(family, labels) or 0.0


@pytest_twisted.ensureDeferred
async def test_calls_are_counted_as_kube_counts_them() -> None:
    deny = {"allowed": False, "status": {"code": 403, "message": "no"}}
    down = CallError("failed to call webhook: EOF")
    caller = Caller({"ok-m": lambda req: {"allowed": True}, "deny-m": lambda req: deny, "dn": down})
    labels = {"operation": "CREATE", "type": "validating"}
    requests = "apiserver_admission_webhook_request_total"
    rejections = "apiserver_admission_webhook_rejection_count"
    before = {
        "ok": _sample(requests, code="200", name="ok-m", rejected="false", **labels),
        "deny": _sample(
            rejections, error_type="no_error", name="deny-m", rejection_code="403", **labels
        ),
        "down": _sample(
            rejections, error_type="calling_webhook_error", name="dn", rejection_code="0", **labels
        ),
    }
    hooks = [hook("ok-m"), hook("deny-m"), hook("dn")]
    with pytest.raises(errors.StatusError):
        await plugin([], hooks, caller).validate(request(object=deployment()))
    assert (
        _sample(requests, code="200", name="ok-m", rejected="false", **labels) == before["ok"] + 1
    )
    assert (
        _sample(rejections, error_type="no_error", name="deny-m", rejection_code="403", **labels)
        == before["deny"] + 1
    )
    assert (
        _sample(
            rejections, error_type="calling_webhook_error", name="dn", rejection_code="0", **labels
        )
        == before["down"] + 1
    )
    assert (
        _sample(
            "apiserver_admission_webhook_admission_duration_seconds_count",
            name="deny-m",
            rejected="true",
            **labels,
        )
        >= 1
    )
