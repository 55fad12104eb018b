"""Events refused as kube-apiserver v1.36 refused each, through both APIs (reference:
dry-run creates and updates in one namespace); "" where kube accepted.  kube validates
its internal Event, so the paths are core v1's whichever API was asked."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry import prepare
from platform_api.registry.events import CoreEventStrategy, EventStrategy
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate

NS = "evtest"
WHEN = "2026-11-29T10:00:00.000000Z"
QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def new_style(**changes: Any) -> dict[str, Any]:
    event = {
        "metadata": {"name": "a", "namespace": NS},
        "eventTime": WHEN,
        "reportingController": "x.io/c",
        "reportingInstance": "i",
        "action": "A",
        "reason": "R",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p", "namespace": NS},
    }
    event.update(changes)
    return {k: v for k, v in event.items() if v is not None}


def core(**changes: Any) -> dict[str, Any]:
    event = {
        "metadata": {"name": "c", "namespace": NS},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": NS},
        "reason": "R",
        "message": "m",
        "type": "Normal",
    }
    event.update(changes)
    return {k: v for k, v in event.items() if v is not None}


def _strategy(group: str) -> Any:
    rt = builtin_scheme().lookup(group, "v1", "events")
    assert rt is not None
    return (EventStrategy if group else CoreEventStrategy)(rt)


def _message(errs: list[Any]) -> str:
    return aggregate(errs) if errs else ""


NEW_CASES = [
    (
        new_style(
            deprecatedFirstTimestamp="2026-11-29T10:00:00Z",
            deprecatedLastTimestamp="2026-11-29T10:00:00Z",
            deprecatedCount=3,
            deprecatedSource={"component": "x"},
        ),
        '[firstTimestamp: Invalid value: "": needs to be unset, lastTimestamp: Invalid value: '
        '"": needs to be unset, count: Invalid value: "": needs to be unset, source: Invalid '
        'value: "": needs to be unset]',
    ),
    (
        new_style(series={"count": 1}),
        '[series.count: Invalid value: "": should be at least 2, series.lastObservedTime: '
        "Required value]",
    ),
    (
        new_style(regarding={"kind": "Pod", "name": "p"}),
        'involvedObject.namespace: Invalid value: "": does not match event.namespace',
    ),
    (
        {"metadata": {"name": "d", "namespace": NS}},
        '[involvedObject.namespace: Invalid value: "": does not match event.namespace, '
        'eventTime: Required value, type: Invalid value: "": has invalid value: ]',
    ),
    (
        new_style(note="x" * 1025, action="a" * 129, reason="r" * 129, reportingInstance="i" * 129),
        '[reportingInstance: Invalid value: "": can have at most 128 characters, action: '
        'Invalid value: "": can have at most 128 characters, reason: Invalid value: "": can '
        'have at most 128 characters, message: Invalid value: "": can have at most 1024 '
        "characters]",
    ),
    (new_style(type="Bad"), 'type: Invalid value: "": has invalid value: Bad'),
    (
        new_style(reportingController="bad controller!"),
        f'reportingController: Invalid value: "bad controller!": {QUALIFIED}',
    ),
    (new_style(series={"count": 2, "lastObservedTime": WHEN}), ""),
]


@pytest.mark.parametrize(("event", "message"), NEW_CASES)
def test_events_api_creates(event: dict[str, Any], message: str) -> None:
    assert _message(_strategy("events.platform.io").validate(event)) == message


CORE_CASES = [
    (
        core(eventTime=WHEN),
        '[reportingComponent: Required value, reportingComponent: Invalid value: "": name '
        f'part must be non-empty, reportingComponent: Invalid value: "": {QUALIFIED}, '
        "reportingInstance: Required value, action: Required value]",
    ),
    (core(eventTime=WHEN, reportingComponent="x.io/c", reportingInstance="i", action="A"), ""),
    (
        core(
            eventTime=WHEN,
            reportingComponent="x.io/c",
            reportingInstance="i",
            action="A",
            involvedObject={"kind": "Pod", "name": "p"},
        ),
        'involvedObject.namespace: Invalid value: "": does not match event.namespace',
    ),
    (core(metadata={"name": "Bad_Name2", "namespace": NS}), ""),  # any path segment
    # a generateName is a path segment's prefix: dots alone are fine, a '/' is not
    (core(metadata={"generateName": "..", "name": "..x7k2p", "namespace": NS}), ""),
    (
        core(metadata={"generateName": "a/", "name": "a/x7k2p", "namespace": NS}),
        "[metadata.generateName: Invalid value: \"a/\": may not contain '/', "
        "metadata.name: Invalid value: \"a/x7k2p\": may not contain '/']",
    ),
]


@pytest.mark.parametrize(("event", "message"), CORE_CASES)
def test_core_creates(event: dict[str, Any], message: str) -> None:
    assert _message(_strategy("").validate(event)) == message


UPDATE_CASES = [
    ({"note": "n2"}, 'message: Invalid value: "n2": field is immutable'),
    (
        {"regarding": {"kind": "Pod", "name": "q", "namespace": NS}},
        'involvedObject: Invalid value: {"Kind":"Pod","Namespace":"evtest","Name":"q","UID":"",'
        '"APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable',
    ),
    (
        {"reason": "R2", "type": "Warning", "action": "B"},
        '[reason: Invalid value: "R2": field is immutable, type: Invalid value: "Warning": '
        'field is immutable, action: Invalid value: "B": field is immutable]',
    ),
    (
        {"eventTime": "2026-11-29T10:00:01.000000Z"},
        'eventTime: Invalid value: "2026-11-29T10:00:01.000000Z": field is immutable',
    ),
    (
        {"reportingController": "y.io/c", "reportingInstance": "j"},
        '[reportingController: Invalid value: "y.io/c": field is immutable, '
        'reportingInstance: Invalid value: "j": field is immutable]',
    ),
    (
        {"related": {"kind": "Node", "name": "n"}},
        'related: Invalid value: {"Kind":"Node","Namespace":"","Name":"n","UID":"",'
        '"APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable',
    ),
    ({"series": {"count": 2, "lastObservedTime": "2026-11-29T10:00:05.000000Z"}}, ""),
    (
        {"series": {"count": 1}},
        '[series.count: Invalid value: "": should be at least 2, series.lastObservedTime: '
        "Required value]",
    ),
    (
        {
            "deprecatedCount": 4,
            "deprecatedSource": {"component": "c"},
            "deprecatedFirstTimestamp": "2026-11-29T10:00:00Z",
        },
        '[source: Invalid value: {"Component":"c","Host":""}: field is immutable, '
        'firstTimestamp: Invalid value: "2026-11-29T10:00:00Z": field is immutable, count: '
        "Invalid value: 4: field is immutable]",
    ),
]


@pytest.mark.parametrize(("change", "message"), UPDATE_CASES)
def test_events_api_updates(change: dict[str, Any], message: str) -> None:
    old = new_style(note="n")
    old["metadata"].update(uid="u", resourceVersion="5", creationTimestamp="2026-11-29T10:00:00Z")
    new = copy.deepcopy(old)
    new.update(change)
    assert _message(_strategy("events.platform.io").validate_update(new, old)) == message


def test_a_cleared_string_is_quoted_as_gos_empty_string() -> None:
    """kube prints the new value of an immutable string field as Go holds it: a field
    cleared (absent once decoded) is ``""``, not null (the reference's answer)."""
    old = new_style(note="n")
    old["metadata"].update(uid="u", resourceVersion="5", creationTimestamp="2026-11-29T10:00:00Z")
    new = copy.deepcopy(old)
    del new["reportingInstance"]
    assert _message(_strategy("events.platform.io").validate_update(new, old)) == (
        '[reportingInstance: Required value, reportingInstance: Invalid value: "": '
        "field is immutable]"
    )


def test_core_updates_keep_the_legacy_rules_only() -> None:
    """A v1 update may change what the events API may not (kube: 200)."""
    old = core()
    old["metadata"].update(uid="u", resourceVersion="5", creationTimestamp="2026-11-29T10:00:00Z")
    new = copy.deepcopy(old)
    new.update(
        message="m2", reason="X", involvedObject={"kind": "Pod", "name": "q", "namespace": NS}
    )
    assert _message(_strategy("").validate_update(new, old)) == ""


def test_an_invalid_events_api_event_is_an_invalid_core_event() -> None:
    """kube names its internal type: ``Event "d" is invalid``, no group."""
    rt = builtin_scheme().lookup("events.platform.io", "v1", "events")
    assert rt is not None
    event = new_style(type="Bad")
    with pytest.raises(errors.StatusError) as raised:
        prepare.before_create(rt, EventStrategy(rt), NS, event, "2026-11-29T10:00:00Z")
    assert raised.value.message == (
        'Event "a" is invalid: type: Invalid value: "": has invalid value: Bad'
    )
    assert raised.value.details == {
        "name": "a",
        "kind": "Event",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "": has invalid value: Bad',
                "field": "type",
            }
        ],
    }
