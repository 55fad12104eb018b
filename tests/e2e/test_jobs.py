"""Jobs on a real server, driven by stock kubectl: the job-controller makes pods through
the request chain, a test standing in for the kubelet ends them, and ``kubectl wait``
sees the Job complete or fail; deleting a Job releases its pods."""

from __future__ import annotations

import json
from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace

TRACKING = "batch.kubernetes.io/job-tracking"


def job_pods(server: Server, namespace: str, job: str) -> list[dict[str, Any]]:
    out = server.kubectl(
        "get", "pods", "-n", namespace, "-l", f"batch.kubernetes.io/job-name={job}", "-o", "json"
    ).stdout
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def end(admin: requests.Session, server: Server, pod: dict[str, Any], phase: str) -> None:
    """What a kubelet reports when the pod's container exits."""
    meta = pod["metadata"]
    url = f"{server.url}/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status"
    code = 0 if phase == "Succeeded" else 1
    terminated = {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}
    patch = {
        "status": {
            "phase": phase,
            "containerStatuses": [
                {
                    "name": pod["spec"]["containers"][0]["name"],
                    "image": pod["spec"]["containers"][0]["image"],
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": terminated},
                }
            ],
        }
    }
    answer = admin.patch(
        url, data=json.dumps(patch), headers={"Content-Type": "application/merge-patch+json"}
    )
    assert answer.status_code == 200, answer.text


def test_kubectl_job_completes_and_is_deleted_with_its_pods(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "jobs").split("/")[4]
    kubectl = server.kubectl
    made = kubectl("create", "job", "pi", "--image=busybox", "-n", ns, "--", "echo", "hi")
    assert made.stdout.strip() == "job.batch/pi created"
    eventually(lambda: len(job_pods(server, ns, "pi")) == 1, timeout=30)
    (pod,) = job_pods(server, ns, "pi")
    assert pod["metadata"]["finalizers"] == [TRACKING]
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "Job"
    # Through admission: the service account controller's default account was mounted.
    assert pod["spec"]["serviceAccountName"] == "default"
    end(admin, server, pod, "Succeeded")
    waited = kubectl("wait", "--for=condition=complete", "job/pi", "-n", ns, "--timeout=30s")
    assert waited.stdout.strip() == "job.batch/pi condition met"
    job = json.loads(kubectl("get", "job", "pi", "-n", ns, "-o", "json").stdout)
    status = job["status"]
    assert status["succeeded"] == 1 and status["ready"] == 0 and status["terminating"] == 0
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    table = kubectl("get", "job", "pi", "-n", ns).stdout.splitlines()
    assert table[0].split()[:3] == ["NAME", "STATUS", "COMPLETIONS"]
    assert table[1].split()[:3] == ["pi", "Complete", "1/1"]
    (done,) = job_pods(server, ns, "pi")
    assert not done["metadata"].get("finalizers")  # counted, so released
    events = kubectl("get", "events", "-n", ns, "--field-selector", "involvedObject.name=pi")
    assert "Completed" in events.stdout and "SuccessfulCreate" in events.stdout
    kubectl("delete", "job", "pi", "-n", ns)
    eventually(lambda: job_pods(server, ns, "pi") == [], timeout=30)


def test_a_failing_job_fails_and_kubectl_wait_sees_it(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "jobfail").split("/")[4]
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "bad"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            },
        },
    }
    server.kubectl("apply", "-n", ns, "-f", "-", stdin=json.dumps(manifest))
    eventually(lambda: len(job_pods(server, ns, "bad")) == 1, timeout=30)
    (pod,) = job_pods(server, ns, "bad")
    end(admin, server, pod, "Failed")
    waited = server.kubectl("wait", "--for=condition=failed", "job/bad", "-n", ns, "--timeout=30s")
    assert waited.stdout.strip() == "job.batch/bad condition met"
    status = json.loads(server.kubectl("get", "job", "bad", "-n", ns, "-o", "json").stdout)[
        "status"
    ]
    assert status["failed"] == 1
    failed = status["conditions"][-1]
    assert (failed["type"], failed["reason"], failed["message"]) == (
        "Failed",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )


def test_a_job_whose_pods_admission_refuses_reports_it_and_makes_nothing(
    server: Server, admin: requests.Session
) -> None:
    """A template naming a service account that does not exist: the Job is stored (kube
    does not check it), its pods are refused, a FailedCreate event says why."""
    ns = make_namespace(admin, server, "jobsa").split("/")[4]
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "nosa"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "serviceAccountName": "ghost",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            }
        },
    }
    server.kubectl("apply", "-n", ns, "-f", "-", stdin=json.dumps(manifest))

    def refused() -> bool:
        out = server.kubectl("get", "events", "-n", ns, "-o", "json").stdout
        return any(e["reason"] == "FailedCreate" for e in json.loads(out)["items"])

    eventually(refused, timeout=30)
    out = json.loads(server.kubectl("get", "events", "-n", ns, "-o", "json").stdout)
    (event,) = [e for e in out["items"] if e["reason"] == "FailedCreate"][:1]
    assert event["message"] == (
        f'Error creating: pods "nosa-" is forbidden: error looking up service account '
        f'{ns}/ghost: serviceaccount "ghost" not found'
    )
    assert job_pods(server, ns, "nosa") == []
    bad = admin.post(
        f"{server.url}/apis/batch/v1/namespaces/{ns}/jobs",
        json={
            **manifest,
            "metadata": {"name": "neg"},
            "spec": {**manifest["spec"], "parallelism": -1},
        },
    )
    assert bad.status_code == 422
    assert bad.json()["reason"] == "Invalid"
    assert bad.json()["message"] == (
        'Job.batch "neg" is invalid: spec.parallelism: Invalid value: -1: '
        "must be greater than or equal to 0"
    )


def test_a_job_with_a_bad_failure_policy_is_refused_as_kube_refuses_it(
    server: Server, admin: requests.Session
) -> None:
    """kube's validatePodFailurePolicy (answer recorded from kube-apiserver v1.36)."""
    ns = make_namespace(admin, server, "job-policy").split("/")[4]
    pod = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    rule = {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [0, 2, 1]}}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bad"}}
    job["spec"] = {"template": {"spec": pod}, "podFailurePolicy": {"rules": [rule]}}
    url = f"{server.url}/apis/batch/v1/namespaces/{ns}/jobs"
    r = admin.post(url, json=job)
    body = r.json()
    assert (r.status_code, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Job.batch "bad" is invalid: [spec.podFailurePolicy.rules[0].action: Invalid value: '
        '"FailIndex": requires the backoffLimitPerIndex to be set, '
        "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 "
        "for the In operator, spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: "
        "[0,2,1]: must be ordered]"
    )
    assert admin.get(f"{url}/bad").status_code == 404


def test_a_restart_policy_a_job_does_not_take_is_named(
    server: Server, admin: requests.Session
) -> None:
    """kube: Always (or unset, defaulted to Always) is Required with the valid values;
    any other value Unsupported, naming them (ours said Required for both)."""
    base = make_namespace(admin, server, "job-restart").replace("configmaps", "jobs")
    base = base.replace("/api/v1/", "/apis/batch/v1/")
    container = {"name": "c", "image": "i"}
    where = "spec.template.spec.restartPolicy"
    for policy, cause in (
        (
            "Always",
            {
                "reason": "FieldValueRequired",
                "message": 'Required value: valid values: "OnFailure", "Never"',
            },
        ),
        (
            "Sometimes",
            {
                "reason": "FieldValueNotSupported",
                "message": 'Unsupported value: "Sometimes": supported values: "OnFailure", "Never"',
            },
        ),
    ):
        pod = {"restartPolicy": policy, "containers": [container]}
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}
        job["spec"] = {"template": {"spec": pod}}
        r = admin.post(server.url + base, json=job)
        assert r.status_code == 422
        causes = [c for c in r.json()["details"]["causes"] if c["field"] == where]
        assert causes[-1] == {**cause, "field": where}
