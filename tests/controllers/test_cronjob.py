"""cronjob-controller over real storage and a test clock: Jobs at the scheduled times,
the active list, concurrency policies, deadlines, history limits and kube's events.

The clock starts at kube's topOfTheHour less 30 s (2016-05-19T09:59:30Z, a Thursday);
the stores stamp creation times from it.  No Job controller runs: a test finishes a Job
by writing its status.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.controllers import registry
from platform_api.controllers.cronjob import CronJobController
from platform_api.controllers.cronjobutil import SCHEDULED_AT
from platform_api.storage.interface import ListOptions
from platform_api.timestamps import format_timestamp
from tests.controllers.kit import ControllerSetup

Obj = dict[str, Any]
CRONJOBS, JOBS, EVENTS = ("batch", "v1", "cronjobs"), ("batch", "v1", "jobs"), ("", "v1", "events")
NS = "default"
TOP = 1463652000  # 2016-05-19T10:00:00Z
MINUTE = TOP // 60  # 24394200: the minute in a Job's name


def cronjob(schedule: str = "* * * * *", name: str = "cj", **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {
                "metadata": {"labels": {"app": "cj"}, "annotations": {"note": "x"}},
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": "busybox"}],
                        }
                    }
                },
            },
            **spec,
        },
    }


class Setup(ControllerSetup):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        clock = self.cluster.clock
        clock.advance(TOP - 30)
        st = self.cluster.stores
        for kind in (CRONJOBS, JOBS, EVENTS):
            st[kind].clock = clock.seconds
        self.controller = CronJobController(
            st[CRONJOBS], st[JOBS], st[EVENTS], self.cluster.hub, clock
        )
        self.start(self.controller)

    def items(self, kind: tuple[str, str, str]) -> list[Obj]:
        return [s.object for s in self.cluster.stores[kind].list(NS, ListOptions()).items]

    def jobs(self) -> list[str]:
        return sorted(j["metadata"]["name"] for j in self.items(JOBS))

    def cronjob(self, name: str = "cj") -> Obj:
        found = self.get(CRONJOBS, name, NS)
        assert found is not None
        return found

    def status(self, name: str = "cj") -> Obj:
        return self.cronjob(name).get("status") or {}

    def active(self, name: str = "cj") -> list[str]:
        return [r["name"] for r in self.status(name).get("active") or []]

    def events(self) -> list[tuple[str, str, str]]:
        found = [(e["firstTimestamp"], e["metadata"]["name"], e) for e in self.items(EVENTS)]
        return [(e["type"], e["reason"], e["message"]) for _, _, e in sorted(found)]

    def until(self, when: float) -> None:
        """Let the clock run to ``when`` (unix seconds), each timer at its own time."""
        clock = self.cluster.clock
        while True:
            due = [c.getTime() for c in clock.getDelayedCalls() if c.getTime() <= when]
            if not due:
                break
            self.wait(max(min(due) - clock.seconds(), 0.0))
        self.wait(max(when - clock.seconds(), 0.0))

    def finish(self, name: str, condition: str, start: int, end: int) -> None:
        stamp = format_timestamp(end)

        def write(job: Obj | None) -> Obj:
            assert job is not None
            # kube's status rules: Complete comes with SuccessCriteriaMet and a
            # completionTime, Failed with FailureTarget
            first = "SuccessCriteriaMet" if condition == "Complete" else "FailureTarget"
            job["status"] = {
                "startTime": format_timestamp(start),
                "conditions": [
                    {"type": first, "status": "True", "lastTransitionTime": stamp},
                    {"type": condition, "status": "True", "lastTransitionTime": stamp},
                ],
            }
            if condition == "Complete":
                job["status"]["completionTime"] = stamp
            return job

        self.cluster.run(self.cluster.stores[JOBS].update(NS, name, write, subresource="status"))
        self.wait(0.1)

    def change(self, **spec: Any) -> None:
        def write(cj: Obj | None) -> Obj:
            assert cj is not None
            cj["spec"].update(spec)
            return cj

        self.cluster.run(self.cluster.stores[CRONJOBS].update(NS, "cj", write))
        self.wait(0.1)


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    monkeypatch.setenv("TZ", "UTC")  # schedules without a zone: the process's (Go's Local)
    return Setup(str(tmp_path))


def test_registered_under_kubes_name_and_on_by_default() -> None:
    assert registry.parse("cronjob") == {"cronjob-controller"}
    assert "cronjob-controller" in registry.default_on()


def test_a_job_at_the_scheduled_time_with_kubes_name_labels_annotations_and_owner(
    s: Setup,
) -> None:
    made = s.create(CRONJOBS, cronjob(), NS)
    s.until(TOP - 1)
    assert s.jobs() == [] and s.status() == {}
    s.until(TOP + 1)
    (job,) = s.items(JOBS)
    meta = job["metadata"]
    assert meta["name"] == f"cj-{MINUTE}"
    assert meta["labels"]["app"] == "cj"
    assert meta["annotations"] == {"note": "x", SCHEDULED_AT: "2016-05-19T10:00:00Z"}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": "cj",
            "uid": made["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"
    assert s.status() == {
        "active": [
            {
                "kind": "Job",
                "namespace": NS,
                "name": f"cj-{MINUTE}",
                "uid": meta["uid"],
                "apiVersion": "batch/v1",
                "resourceVersion": meta["resourceVersion"],
            }
        ],
        "lastScheduleTime": "2016-05-19T10:00:00Z",
    }
    assert s.events() == [("Normal", "SuccessfulCreate", f"Created job cj-{MINUTE}")]
    s.until(TOP + 61)  # concurrencyPolicy Allow: the next one starts beside it
    assert s.jobs() == [f"cj-{MINUTE}", f"cj-{MINUTE + 1}"]
    assert s.active() == [f"cj-{MINUTE}", f"cj-{MINUTE + 1}"]
    assert s.status()["lastScheduleTime"] == "2016-05-19T10:01:00Z"


def test_the_time_zone_decides_the_time_and_stamps_the_annotation(s: Setup) -> None:
    # 12:00 in Rome is 10:00 UTC
    s.create(CRONJOBS, cronjob("0 12 * * *", timeZone="Europe/Rome"), NS)
    s.until(TOP + 1)
    (job,) = s.items(JOBS)
    assert job["metadata"]["annotations"][SCHEDULED_AT] == "2016-05-19T12:00:00+02:00"
    assert s.status()["lastScheduleTime"] == "2016-05-19T10:00:00Z"


def test_forbid_skips_while_one_runs_and_a_finished_one_leaves_the_active_list(
    s: Setup,
) -> None:
    s.create(CRONJOBS, cronjob(concurrencyPolicy="Forbid"), NS)
    s.until(TOP + 61)
    assert s.jobs() == [f"cj-{MINUTE}"]
    assert s.events()[-1] == (
        "Normal",
        "JobAlreadyActive",
        "Not starting job because prior execution is running and concurrency policy is Forbid",
    )
    s.finish(f"cj-{MINUTE}", "Complete", TOP, TOP + 90)
    assert s.events()[-2:] == [
        ("Normal", "SawCompletedJob", f"Saw completed job: cj-{MINUTE}, condition: Complete"),
        ("Normal", "SuccessfulCreate", f"Created job cj-{MINUTE + 1}"),
    ]
    # 10:01 is still due (no starting deadline): it starts now, late
    assert s.jobs() == [f"cj-{MINUTE}", f"cj-{MINUTE + 1}"]
    assert s.status() | {"active": s.active()} == {
        "active": [f"cj-{MINUTE + 1}"],
        "lastScheduleTime": "2016-05-19T10:01:00Z",
        "lastSuccessfulTime": "2016-05-19T10:01:30Z",
    }


def test_replace_deletes_the_running_job_for_the_next(s: Setup) -> None:
    s.create(CRONJOBS, cronjob(concurrencyPolicy="Replace"), NS)
    s.until(TOP + 61)
    assert s.jobs() == [f"cj-{MINUTE + 1}"]
    assert s.active() == [f"cj-{MINUTE + 1}"]
    assert s.events() == [
        ("Normal", "SuccessfulCreate", f"Created job cj-{MINUTE}"),
        ("Normal", "SuccessfulDelete", f"Deleted job cj-{MINUTE}"),
        ("Normal", "SuccessfulCreate", f"Created job cj-{MINUTE + 1}"),
    ]


def test_suspended_nothing_starts_until_resumed_then_the_latest_missed_time(s: Setup) -> None:
    s.create(CRONJOBS, cronjob(suspend=True), NS)
    s.until(TOP + 150)
    assert s.jobs() == []
    s.change(suspend=False)
    assert s.jobs() == [f"cj-{MINUTE + 2}"]  # 10:02, not 10:00 nor 10:01
    assert s.status()["lastScheduleTime"] == "2016-05-19T10:02:00Z"


def test_a_time_older_than_the_starting_deadline_is_not_started(s: Setup) -> None:
    s.create(CRONJOBS, cronjob(startingDeadlineSeconds=10), NS)
    s.controller.stop()
    s.until(TOP + 15)  # 10:00 was due 15 s ago
    s.controller.start()
    s.wait(0.1)
    # kube counts from the deadline on: 10:00 is not even seen (no MissSchedule event)
    assert s.jobs() == [] and s.events() == [] and s.status() == {}
    s.until(TOP + 61)  # the next one is within its deadline
    assert s.jobs() == [f"cj-{MINUTE + 1}"]


def test_more_than_100_missed_times_warn_and_start_the_latest(s: Setup) -> None:
    s.controller.stop()
    s.cluster.stores[CRONJOBS].clock = lambda: TOP - 200 * 60 - 30  # made 200 minutes ago
    s.create(CRONJOBS, cronjob(), NS)
    s.controller.start()
    s.wait(0.1)
    assert s.jobs() == [f"cj-{MINUTE - 1}"]  # 09:59, the latest due
    assert s.events() == [
        (
            "Warning",
            "TooManyMissedTimes",
            "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
            "check clock skew",
        ),
        ("Normal", "SuccessfulCreate", f"Created job cj-{MINUTE - 1}"),
    ]


def test_history_limits_delete_the_oldest_finished_jobs(s: Setup) -> None:
    s.create(CRONJOBS, cronjob(successfulJobsHistoryLimit=1, failedJobsHistoryLimit=1), NS)
    s.until(TOP + 121)
    assert s.jobs() == [f"cj-{MINUTE + n}" for n in range(3)]
    s.finish(f"cj-{MINUTE}", "Complete", TOP, TOP + 125)
    s.finish(f"cj-{MINUTE + 1}", "Failed", TOP + 60, TOP + 126)
    assert s.jobs() == [f"cj-{MINUTE}", f"cj-{MINUTE + 1}", f"cj-{MINUTE + 2}"]
    s.finish(f"cj-{MINUTE + 2}", "Complete", TOP + 120, TOP + 127)
    # two successful ones, one kept: the one that started first goes
    assert s.jobs() == [f"cj-{MINUTE + 1}", f"cj-{MINUTE + 2}"]
    assert ("Normal", "SuccessfulDelete", f"Deleted job cj-{MINUTE}") in s.events()
    status = s.status()
    assert "active" not in status
    assert status["lastSuccessfulTime"] == "2016-05-19T10:02:07Z"


def test_a_deleted_job_leaves_the_active_list(s: Setup) -> None:
    s.create(CRONJOBS, cronjob("0 * * * *"), NS)
    s.until(TOP + 1)
    assert s.active() == [f"cj-{MINUTE}"]
    s.delete(JOBS, f"cj-{MINUTE}", NS)
    assert "active" not in s.status()
    assert s.events()[-1] == ("Normal", "MissingJob", f"Active job went missing: cj-{MINUTE}")
    assert s.status()["lastScheduleTime"] == "2016-05-19T10:00:00Z"
    assert s.jobs() == []  # the time was started once: it is not started again


def test_a_job_the_controller_did_not_record_is_reported(s: Setup) -> None:
    made = s.create(CRONJOBS, cronjob("0 * * * *"), NS)
    stray = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "stray",
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "CronJob", "name": "cj", "controller": True}
                | {"uid": made["metadata"]["uid"]}
            ],
        },
        "spec": cronjob()["spec"]["jobTemplate"]["spec"],
    }
    s.create(JOBS, stray, NS)
    s.wait(0.1)
    assert s.events() == [
        (
            "Warning",
            "UnexpectedJob",
            "Saw a job that the controller did not create or forgot: stray",
        )
    ]
    assert s.status() == {}


def test_a_job_of_the_same_name_that_is_not_ours_is_left_alone(s: Setup) -> None:
    s.create(CRONJOBS, cronjob(), NS)
    template = cronjob()["spec"]["jobTemplate"]["spec"]
    s.create(JOBS, {"metadata": {"name": f"cj-{MINUTE}"}, "spec": template}, NS)
    s.until(TOP + 1)
    assert s.jobs() == [f"cj-{MINUTE}"]
    assert s.events() == [] and s.status() == {}


def test_a_job_the_api_refuses_is_a_failed_create_event_and_is_retried(s: Setup) -> None:
    bad = cronjob()
    bad["spec"]["jobTemplate"]["metadata"]["labels"] = {"bad key": "x"}  # not validated
    s.create(CRONJOBS, bad, NS)
    s.until(TOP + 1)
    assert s.jobs() == [] and s.status() == {}
    events = s.events()
    # Retried (kube's per-item backoff: 5 ms, doubling): one Event, its count rising.
    assert len(events) == 1
    assert next(e["count"] for e in s.items(EVENTS)) > 1
    assert set(events) == {
        (
            "Warning",
            "FailedCreate",
            f'Error creating job: Job.batch "cj-{MINUTE}" is invalid: metadata.labels: '
            'Invalid value: "bad key": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        )
    }
    fixed = cronjob()["spec"]["jobTemplate"]
    s.change(jobTemplate=fixed)  # looked at at once: 10:00 is still due
    assert s.jobs() == [f"cj-{MINUTE}"]
    assert s.active() == [f"cj-{MINUTE}"]


def test_a_new_schedule_waits_for_its_own_next_time(s: Setup) -> None:
    s.create(CRONJOBS, cronjob("0 0 * * *"), NS)
    s.change(schedule="*/5 * * * *")
    s.until(TOP + 1)
    assert s.jobs() == [f"cj-{MINUTE}"]
    s.until(TOP + 299)
    assert s.jobs() == [f"cj-{MINUTE}"]
    s.until(TOP + 301)
    assert s.jobs() == [f"cj-{MINUTE}", f"cj-{MINUTE + 5}"]


def test_a_schedule_with_its_own_zone_is_warned_about_and_still_runs(s: Setup) -> None:
    s.create(CRONJOBS, cronjob("0 0 * * *"), NS)

    async def own_zone(existing: Obj | None, _stored: Any) -> Obj:
        assert existing is not None  # written past validation, as an object kept from old
        existing["spec"]["schedule"] = "CRON_TZ=Europe/Rome 0 12 * * *"
        return existing

    key = s.cluster.stores[CRONJOBS].key(NS, "cj")
    s.cluster.run(s.cluster.storage.guaranteed_update(key, own_zone))
    s.wait(0.1)
    s.until(TOP + 1)  # 12:00 in Rome
    (job,) = s.items(JOBS)
    # the annotation is in spec.timeZone's zone, which is unset: UTC
    assert job["metadata"]["annotations"][SCHEDULED_AT] == "2016-05-19T10:00:00Z"
    warning = (
        "Warning",
        "UnsupportedSchedule",
        'CRON_TZ or TZ used in schedule "CRON_TZ=Europe/Rome 0 12 * * *" is not officially '
        "supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ "
        "for more details",
    )
    assert s.events()[0] == warning
    assert ("Normal", "SuccessfulCreate", f"Created job cj-{MINUTE}") in s.events()
