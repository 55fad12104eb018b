"""kube's namespace deletion conditions: their order, wording and transition times."""

from __future__ import annotations

from platform_api.controllers.namespaceconditions import Remaining, with_conditions
from platform_api.scheme.types import ResourceType

PODS = ResourceType("", "v1", "Pod", "pods", "pod", namespaced=True)
WIDGETS = ResourceType("example.com", "v1", "Widget", "widgets", "widget", namespaced=True)


def held(finalizer: str) -> dict:
    return {"metadata": {"finalizers": [finalizer]}}


def test_what_remains_is_listed_sorted_with_the_finalizers_holding_it() -> None:
    remaining = Remaining()
    remaining.count(WIDGETS, [held("b.io/x"), held("a.io/y"), held("b.io/x")])
    remaining.count(PODS, [{"metadata": {}}])
    remaining.count(PODS, [])  # nothing left of a resource: not listed
    ns = with_conditions({"metadata": {"name": "n"}}, remaining, "2026-12-01T12:00:00Z")
    assert ns is not None
    (content, finalizers) = ns["status"]["conditions"][3:]
    assert content == {
        "type": "NamespaceContentRemaining",
        "status": "True",
        "lastTransitionTime": "2026-12-01T12:00:00Z",
        "reason": "SomeResourcesRemain",
        "message": "Some resources are remaining: pods. has 1 resource instances, "
        "widgets.example.com has 3 resource instances",
    }
    assert finalizers["message"] == (
        "Some content in the namespace has finalizers remaining: a.io/y in 1 resource "
        "instances, b.io/x in 2 resource instances"
    )


def test_times_move_only_when_a_status_does() -> None:
    first = Remaining()
    first.count(PODS, [{"metadata": {}}, {"metadata": {}}])
    ns = with_conditions({"metadata": {}}, first, "2026-12-01T12:00:00Z")
    assert ns is not None
    assert with_conditions(ns, first, "2026-12-01T12:00:05Z") is None  # nothing to write
    fewer = Remaining()
    fewer.count(PODS, [{"metadata": {}}])
    ns = with_conditions(ns, fewer, "2026-12-01T12:00:10Z")
    assert ns is not None
    content = ns["status"]["conditions"][3]
    assert (content["message"], content["lastTransitionTime"]) == (
        "Some resources are remaining: pods. has 1 resource instances",
        "2026-12-01T12:00:00Z",  # still True: the time it became so
    )
    ns = with_conditions(ns, Remaining(), "2026-12-01T12:00:20Z")
    assert ns is not None
    content = ns["status"]["conditions"][3]
    assert (content["status"], content["reason"], content["lastTransitionTime"]) == (
        "False",
        "ContentRemoved",
        "2026-12-01T12:00:20Z",
    )
