"""CronJobs on a real server, driven by stock kubectl: the cronjob-controller makes a Job
at the next minute (kube's name, annotation and owner), ``kubectl get cronjob`` shows
when; a Job the API refuses is a FailedCreate event, nothing half-made, and the
controller carries on.  The test waits for a minute boundary: up to ~75 s."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server, kubectl_available
from tests.e2e.crds import eventually
from tests.e2e.test_list import make_namespace

pytestmark = pytest.mark.skipif(not kubectl_available(), reason="kubectl not installed")
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
BROKEN = {
    "apiVersion": "batch/v1",
    "kind": "CronJob",
    "metadata": {"name": "broken"},
    "spec": {
        "schedule": "* * * * *",
        "jobTemplate": {
            # kube does not validate the template's metadata; the Job's validation refuses it
            "metadata": {"labels": {"bad key": "x"}},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        },
    },
}


def get(server: Server, *args: str) -> Any:
    return json.loads(server.kubectl("get", *args, "-o", "json").stdout)


def events(server: Server, namespace: str, name: str) -> list[tuple[str, str, str]]:
    selector = f"involvedObject.name={name}"
    items = get(server, "events", "-n", namespace, "--field-selector", selector)["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items]


def table_row(text: str) -> dict[str, str]:
    """kubectl's one-row table by its columns (headings may hold one space)."""
    header, line = text.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+( \S+)?", header)]
    spans = list(zip(starts, [*starts[1:], None], strict=True))
    return {header[a:b].strip(): line[a:b].strip() for a, b in spans}


@pytest.mark.slow
def test_kubectl_cronjob_makes_jobs_and_a_refused_one_is_an_event(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "cronjobs").split("/")[4]
    kubectl = server.kubectl
    made = kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=* * * * *", "-n", ns)
    assert made.stdout.strip() == "cronjob.batch/tick created"
    applied = kubectl("apply", "-n", ns, "-f", "-", stdin=json.dumps(BROKEN))
    assert applied.stdout.strip() == "cronjob.batch/broken created"
    try:
        uid = get(server, "cronjob", "tick", "-n", ns)["metadata"]["uid"]
        jobs = eventually(lambda: get(server, "jobs", "-n", ns)["items"], timeout=75)
        (job,) = jobs
        meta = job["metadata"]
        minute = int(re.fullmatch(r"tick-(\d+)", meta["name"]).group(1))  # type: ignore[union-attr]
        scheduled = datetime.fromtimestamp(minute * 60, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert meta["annotations"][SCHEDULED_AT] == scheduled
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": "tick",
                "uid": uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]

        def shown() -> dict[str, str] | None:
            row = table_row(kubectl("get", "cronjob", "tick", "-n", ns).stdout)
            return row if row["LAST SCHEDULE"] != "<none>" else None

        row: Any = eventually(shown, timeout=10)
        assert row["SCHEDULE"] == "* * * * *" and row["ACTIVE"] == "1"
        status = get(server, "cronjob", "tick", "-n", ns)["status"]
        assert status["lastScheduleTime"] == scheduled
        assert [a["name"] for a in status["active"]] == [meta["name"]]
        assert ("Normal", "SuccessfulCreate", f"Created job {meta['name']}") in events(
            server, ns, "tick"
        )
        # Made a moment after "tick", "broken" may have been made in the next minute, and
        # is first due a minute later then.
        failed = eventually(lambda: events(server, ns, "broken"), timeout=75)
        assert {f[:2] for f in failed} == {("Warning", "FailedCreate")}
        assert any(
            failed[0][2].startswith(
                f'Error creating job: Job.batch "broken-{due}" is invalid: metadata.labels: '
                'Invalid value: "bad key": name part must consist of alphanumeric characters'
            )
            for due in (minute, minute + 1)
        )
        names = [j["metadata"]["name"] for j in get(server, "jobs", "-n", ns)["items"]]
        assert meta["name"] in names and not any(n.startswith("broken") for n in names)
        assert get(server, "cronjob", "broken", "-n", ns).get("status") in (None, {})
    finally:
        kubectl("delete", "cronjob", "tick", "broken", "-n", ns)


def test_an_invalid_schedule_is_refused_in_kubes_words(server: Server) -> None:
    refused = server.kubectl(
        "create", "cronjob", "bad", "--image=busybox", "--schedule=61 * * * *", check=False
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'error: failed to create cronjob: CronJob.batch "bad" is invalid: spec.schedule: '
        'Invalid value: "61 * * * *": end of range (61) above maximum (59): 61'
    )
