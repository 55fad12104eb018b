"""A Job's immutable pod template and a status write kube refuses, on a real server: the
answers are kube-apiserver v1.36's (recorded from the reference, its uid replaced), and
the stored Job does not change."""

from __future__ import annotations

import copy
from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace

# kube's rendering of the internal PodTemplateSpec, with the Job's name and uid
TEMPLATE = (
    '{{"labels":{{"batch.kubernetes.io/controller-uid":"{uid}","batch.kubernetes.io/job-name":'
    '"immutable","controller-uid":"{uid}","job-name":"immutable"}},"Spec":{{"Volumes":null,'
    '"InitContainers":null,"Containers":[{{"Name":"c","Image":"nginx","Command":["echo","hi"],'
    '"Args":null,"WorkingDir":"","Ports":null,"EnvFrom":null,"Env":null,"Resources":{{"Limits":'
    'null,"Requests":null,"Claims":null}},"ResizePolicy":null,"RestartPolicy":null,'
    '"RestartPolicyRules":null,"VolumeMounts":null,"VolumeDevices":null,"LivenessProbe":null,'
    '"ReadinessProbe":null,"StartupProbe":null,"Lifecycle":null,"TerminationMessagePath":'
    '"/dev/termination-log","TerminationMessagePolicy":"File","ImagePullPolicy":"Always",'
    '"SecurityContext":null,"Stdin":false,"StdinOnce":false,"TTY":false}}],'
    '"EphemeralContainers":null,"RestartPolicy":"Never","TerminationGracePeriodSeconds":30,'
    '"ActiveDeadlineSeconds":null,"DNSPolicy":"ClusterFirst","NodeSelector":null,'
    '"ServiceAccountName":"","AutomountServiceAccountToken":null,"NodeName":"",'
    '"SecurityContext":{{"HostNetwork":false,"HostPID":false,"HostIPC":false,'
    '"ShareProcessNamespace":null,"HostUsers":null,"SELinuxOptions":null,"WindowsOptions":null,'
    '"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"SupplementalGroups":null,'
    '"SupplementalGroupsPolicy":null,"FSGroup":null,"FSGroupChangePolicy":null,"Sysctls":null,'
    '"SeccompProfile":null,"AppArmorProfile":null,"SELinuxChangePolicy":null}},'
    '"ImagePullSecrets":null,"Hostname":"","Subdomain":"","SetHostnameAsFQDN":null,'
    '"Affinity":null,"SchedulerName":"default-scheduler","Tolerations":null,"HostAliases":null,'
    '"PriorityClassName":"","Priority":null,"PreemptionPolicy":null,"DNSConfig":null,'
    '"ReadinessGates":null,"RuntimeClassName":null,"Overhead":null,"EnableServiceLinks":null,'
    '"TopologySpreadConstraints":null,"OS":null,"SchedulingGates":null,"ResourceClaims":null,'
    '"Resources":null,"HostnameOverride":null,"SchedulingGroup":null}}}}'
)
STATUS_CAUSES = [
    ("status.succeeded", "Invalid value: -1: must be greater than or equal to 0"),
    (
        "status.completedIndexes",
        'Invalid value: "1-3": error parsing completedIndexes: too large index: "1"',
    ),
    (
        "status.completedIndexes",
        'Invalid value: "1-3": cannot set non-empty completedIndexes when non-indexed '
        "completion mode",
    ),
    ("status.succeeded", "Invalid value: -1: cannot decrease the succeeded counter"),
]


def invalid(answer: requests.Response) -> dict[str, Any]:
    assert answer.status_code == 422, answer.text
    status: dict[str, Any] = answer.json()
    assert (status["kind"], status["status"], status["reason"]) == ("Status", "Failure", "Invalid")
    assert status["details"]["name"] == "immutable"
    assert (status["details"]["group"], status["details"]["kind"]) == ("batch", "Job")
    return status


def test_template_and_status_refused_as_kube_refuses_them(
    server: Server, admin: requests.Session
) -> None:
    make_namespace(admin, server, "job-updates")
    jobs = f"{server.url}/apis/batch/v1/namespaces/job-updates/jobs"
    pod = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    pod["containers"][0]["command"] = ["echo", "hi"]
    body = {"metadata": {"name": "immutable"}, "spec": {"template": {"spec": pod}}}
    made = admin.post(jobs, json={"apiVersion": "batch/v1", "kind": "Job", **body})
    assert made.status_code == 201, made.text
    # the job-controller has made the pod and counted it: no more writes of its own
    eventually(lambda: admin.get(f"{jobs}/immutable").json().get("status", {}).get("active") == 1)
    stored = admin.get(f"{jobs}/immutable").json()
    uid = stored["metadata"]["uid"]

    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx"
    status = invalid(admin.put(f"{jobs}/immutable", json=changed))
    shown = TEMPLATE.format(uid=uid)
    assert status["message"] == (
        f'Job.batch "immutable" is invalid: spec.template: Invalid value: {shown}: '
        "field is immutable"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: {shown}: field is immutable",
            "field": "spec.template",
        }
    ]

    written = copy.deepcopy(stored)
    written["status"].update(completedIndexes="1-3", succeeded=-1)
    status = invalid(admin.put(f"{jobs}/immutable/status", json=written))
    messages = ", ".join(f"{at}: {message}" for at, message in STATUS_CAUSES)
    assert status["message"] == f'Job.batch "immutable" is invalid: [{messages}]'
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": message, "field": at}
        for at, message in STATUS_CAUSES
    ]

    after = admin.get(f"{jobs}/immutable").json()
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    assert (after["spec"], after["status"]) == (stored["spec"], stored["status"])
