"""What an update may change in a pod's spec, as kube-apiserver v1.36 answered (reference:
strategic-merge patches of a running pod, each answer below)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.patch import json_patch
from platform_api.registry.podupdate import (
    UPDATABLE,
    validate_ephemeral_update,
    validate_pod_update,
)

OLD: dict[str, Any] = {
    "containers": [{"name": "c", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}],
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "activeDeadlineSeconds": 100,
    "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}],
}
FORBIDDEN = f"spec: Forbidden: pod updates may not change fields other than {UPDATABLE}\n"


def changed(**fields: Any) -> dict[str, Any]:
    new = copy.deepcopy(OLD)
    new.update(fields)
    return new


def messages(new: dict[str, Any], old: dict[str, Any] = OLD) -> list[str]:
    return [str(e) for e in validate_pod_update(new, old)]


@pytest.mark.parametrize(
    "new",
    [
        changed(containers=[{**OLD["containers"][0], "image": "nginx:2"}]),
        changed(activeDeadlineSeconds=50),
        changed(tolerations=[*OLD["tolerations"], {"key": "b", "operator": "Exists"}]),
        changed(tolerations=[{**OLD["tolerations"][0], "tolerationSeconds": 5}]),
        changed(volumes=[]),  # an empty list is no list, as kube's semantic equality has it
    ],
)
def test_what_may_change(new: dict[str, Any]) -> None:
    assert messages(new) == []


def test_other_changes_are_refused_with_a_diff_of_the_internal_spec() -> None:
    env = changed(containers=[{**OLD["containers"][0], "env": [{"name": "A", "value": "2"}]}])
    (message,) = messages(env)
    assert message.startswith(FORBIDDEN + "@@ ")
    assert '-     "Value": "1",\n+     "Value": "2",\n' in message
    (message,) = messages(changed(restartPolicy="Never"))
    assert '- "RestartPolicy": "Always",\n+ "RestartPolicy": "Never",\n' in message


# The reference's answers to updates of a pod it stored (a plain one and one with most
# of PodSpec's types set), and to changes of an ephemeral container it had added: the
# stored spec, the update as a JSON patch of it, the message after 'Pod "x" is invalid: '.
_KUBE = json.loads((Path(__file__).parent / "fixtures" / "pod_update_diffs_kube.json").read_text())


def _recorded(section: str) -> list[Any]:
    cases = _KUBE[section]
    return [pytest.param(case, id=case["case"]) for case in cases]


def _old_new(case: dict[str, Any]) -> tuple[Any, Any]:
    old = _KUBE["bases"][case["old"]]
    return json_patch.apply(copy.deepcopy(old), case["patch"]), old


@pytest.mark.parametrize("case", _recorded("pod_updates"))
def test_spec_changes_are_answered_as_kube_answered(case: dict[str, Any]) -> None:
    new, old = _old_new(case)
    expected = [] if case["code"] == 200 else [case["message"]]
    assert messages(new, old) == expected


@pytest.mark.parametrize("case", _recorded("ephemeral_container_updates"))
def test_ephemeral_container_changes_are_answered_as_kube_answered(case: dict[str, Any]) -> None:
    new, old = _old_new(case)
    assert [str(e) for e in validate_ephemeral_update(new, old)] == [case["message"]]


def test_deadline_containers_and_tolerations_as_kube_words_them() -> None:
    assert messages(changed(activeDeadlineSeconds=200)) == [
        "spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to "
        "previous value"
    ]
    assert messages(changed(tolerations=[{"key": "b", "operator": "Exists"}])) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its "
        "tolerationSeconds"
    ]
    two = changed(containers=[*OLD["containers"], {"name": "d", "image": "x"}])
    assert messages(two) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    ]
    negative = changed(terminationGracePeriodSeconds=-1)
    assert messages(changed(terminationGracePeriodSeconds=1), negative) == []


def test_a_removed_deadline_is_reported_with_the_other_changes() -> None:
    """kube stops at a deadline out of range or raised, not at one removed: the spec's
    other changes follow it (the reference's answer)."""
    removed = changed(activeDeadlineSeconds=None, terminationGracePeriodSeconds=5)
    found = messages(removed)
    assert found[0] == (
        "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive "
        "integer to nil value"
    )
    assert len(found) == 2 and found[1].startswith(FORBIDDEN)
    assert '- "TerminationGracePeriodSeconds": 30,' in found[1]
