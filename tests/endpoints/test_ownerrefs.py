"""kube's owner-reference dedup: only entries equal in every field go."""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.ownerrefs import AFTER_ADMISSION, BEFORE, dedup_owner_references

REF = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"}


def _dedup(refs: Any, warning: str = BEFORE) -> tuple[Any, list[str]]:
    obj = {"metadata": {"name": "x", "ownerReferences": refs}}
    warned: list[str] = []
    dedup_owner_references(obj, warned.append, warning)
    return obj["metadata"]["ownerReferences"], warned


def test_equal_entries_go_and_their_uids_are_named() -> None:
    controller = {**REF, "controller": True}
    refs, warned = _dedup([REF, dict(REF), controller, dict(REF), {**REF, "uid": "u2"}])
    assert refs == [REF, controller, {**REF, "uid": "u2"}]
    assert warned == [BEFORE + "u1, u1"]
    assert warned[0].startswith(".metadata.ownerReferences contains duplicate entries; ")


def test_nothing_is_said_when_nothing_repeats() -> None:
    assert _dedup([REF, {**REF, "name": "other"}]) == ([REF, {**REF, "name": "other"}], [])
    assert _dedup([REF]) == ([REF], [])
    assert _dedup("not a list") == ("not a list", [])


def test_after_admission_says_so() -> None:
    _, warned = _dedup([REF, REF], AFTER_ADMISSION)
    assert warned == [
        ".metadata.ownerReferences contains duplicate entries after mutating admission "
        "happens; API server dedups owner references in 1.20+, and may reject such "
        "requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u1"
    ]
