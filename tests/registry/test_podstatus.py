"""Pod status writes against kube-apiserver v1.36's answers.

fixtures/pod_status_updates.json holds, for each status a client PUT through
``pods/status`` on a fresh pod (one container ``c``, restartPolicy Always), the code and
message the reference answered; the same decoding (podIP conversion), backfilling and
validation must give the same.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.podstatus import prepare_pod_status_update, validate_pod_status_update
from platform_api.validation import field

CASES = json.loads((Path(__file__).parent / "fixtures" / "pod_status_updates.json").read_text())


def created(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "st", "namespace": "gp"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }


def status_write(old: dict[str, Any], status: dict[str, Any]) -> tuple[int, str]:
    new = copy.deepcopy(old)
    new["status"].update(copy.deepcopy(status))
    apply_defaults("", "Pod", new)
    prepare_pod_status_update(new, old)
    errs = validate_pod_status_update(new, old)
    if not errs:
        return 200, ""
    return 422, f'Pod "st" is invalid: {field.aggregate(errs)}'


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_status_writes_answer_as_kube(case: dict[str, Any]) -> None:
    assert status_write(created(), case["status"]) == (case["code"], case["message"])


@pytest.mark.parametrize(
    ("policy", "exit_code", "refused"),
    [("Never", 0, True), ("OnFailure", 0, True), ("OnFailure", 1, False), ("Always", 0, False)],
)
def test_a_terminated_container_stays_so_unless_restarted(
    policy: str, exit_code: int, refused: bool
) -> None:
    def state(kind: str, **detail: Any) -> dict[str, Any]:
        entry = {"name": "c", "image": "b", "imageID": "", "ready": False, "restartCount": 0}
        return {"containerStatuses": [{**entry, "state": {kind: detail}}]}

    old = created(restartPolicy=policy)
    old["status"].update(state("terminated", exitCode=exit_code))
    expected = (
        'Pod "st" is invalid: status.containerStatuses[0].state: Forbidden: may not be '
        "transitioned to non-terminated state"
    )
    assert status_write(old, state("running")) == ((422, expected) if refused else (200, ""))


def test_pod_ip_is_authoritative_and_pod_ips_follow_it() -> None:
    for status, ips in (
        ({"podIP": "10.0.0.1"}, ("10.0.0.1", [{"ip": "10.0.0.1"}])),
        ({"podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.1"}]}, ("10.0.0.9", [{"ip": "10.0.0.9"}])),
        ({"podIPs": [{"ip": "10.0.0.1"}]}, ("10.0.0.1", [{"ip": "10.0.0.1"}])),
    ):
        pod = created()
        pod["status"].update(status)
        apply_defaults("", "Pod", pod)
        assert (pod["status"]["podIP"], pod["status"]["podIPs"]) == ips


def test_what_an_old_kubelet_leaves_out_is_kept() -> None:
    old = created()
    old["status"]["observedGeneration"] = 1
    old["status"]["conditions"] = [
        {"type": "Ready", "status": "True", "observedGeneration": 1},
        {"type": "x.io/a", "status": "True", "observedGeneration": 1},
    ]
    new = copy.deepcopy(old)
    new["status"] = {
        "phase": "Running",
        "conditions": [
            {"type": "x.io/a", "status": "False"},
            {"type": "Ready", "status": "False"},
            {"type": "Other", "status": "True"},
        ],
    }
    prepare_pod_status_update(new, old)
    status = new["status"]
    assert (status["qosClass"], status["observedGeneration"]) == ("BestEffort", 1)
    generations = [(c["type"], c.get("observedGeneration")) for c in status["conditions"]]
    assert generations == [("x.io/a", 1), ("Ready", 1), ("Other", None)]


def test_addresses_already_stored_are_not_checked_again() -> None:
    old = created()
    old["status"]["podIPs"] = [{"ip": "010.0.0.1"}]  # stored before the strict checks
    assert status_write(old, {"phase": "Running"}) == (200, "")
