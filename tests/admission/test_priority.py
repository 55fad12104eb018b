"""Priority admission: kube's cases (priority/admission_test.go) over real stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.priority import GROUP, Priority
from tests.admission.plugin_kit import Cluster, attrs, refused

Obj = dict[str, Any]


def klass(name: str, value: int, **extra: Any) -> Obj:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def pod(**spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [], **spec},
    }


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    c = Cluster(str(tmp_path / "db"))
    c.create("priorityclasses", klass("high", 1000), group=GROUP)
    c.create("priorityclasses", klass("never", 50, preemptionPolicy="Never"), group=GROUP)
    return c


def plugin(cluster: Cluster) -> Priority:
    return Priority(cluster.store("priorityclasses", GROUP))


def created(cluster: Cluster, **spec: Any) -> Obj:
    p = pod(**spec)
    plugin(cluster).admit(attrs("CREATE", "pods", "p"), p, None)
    return {k: p["spec"].get(k) for k in ("priorityClassName", "priority", "preemptionPolicy")}


def test_named_class_and_no_default(cluster: Cluster) -> None:
    assert created(cluster, priorityClassName="high") == {
        "priorityClassName": "high",
        "priority": 1000,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    assert created(cluster, priorityClassName="never")["preemptionPolicy"] == "Never"
    assert created(cluster) == {
        "priorityClassName": None,
        "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    assert created(cluster, priority=0)["priority"] == 0


def test_lowest_global_default_wins(cluster: Cluster) -> None:
    cluster.create("priorityclasses", klass("d2", 20, globalDefault=True), group=GROUP)
    cluster.create("priorityclasses", klass("d1", 10, globalDefault=True), group=GROUP)
    assert created(cluster) == {
        "priorityClassName": "d1",
        "priority": 10,
        "preemptionPolicy": "PreemptLowerPriority",
    }


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ({"priorityClassName": "nope"}, "no PriorityClass with name nope was found"),
        (
            {"priorityClassName": "high", "priority": 5},
            "the integer value of priority (5) must not be provided in pod spec; priority admission "
            "controller computed 1000 from the given PriorityClass name",
        ),
        (
            {"priorityClassName": "high", "preemptionPolicy": "Never"},
            "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority "
            "admission controller computed PreemptLowerPriority from the given PriorityClass name",
        ),
    ],
)
def test_refusals(cluster: Cluster, spec: Obj, why: str) -> None:
    err = refused(lambda: plugin(cluster).admit(attrs("CREATE", "pods", "p"), pod(**spec), None))
    assert (err.code, err.message) == (403, f'pods "p" is forbidden: {why}')


def test_updates_keep_the_stored_values(cluster: Cluster) -> None:
    old = pod(priority=1000, preemptionPolicy="Never", priorityClassName="high")
    new = pod(priorityClassName="high")
    plugin(cluster).admit(attrs("UPDATE", "pods", "p"), new, old)
    assert (new["spec"]["priority"], new["spec"]["preemptionPolicy"]) == (1000, "Never")


def test_one_global_default_and_deletes_left_to_storage(cluster: Cluster) -> None:
    p = plugin(cluster)
    cluster.create("priorityclasses", klass("d1", 10, globalDefault=True), group=GROUP)
    why = "PriorityClass d1 is already marked as default. Only one default can exist"
    second = klass("d2", 5, globalDefault=True)
    err = refused(
        lambda: p.validate(attrs("CREATE", "priorityclasses", "d2", group=GROUP), second, None)
    )
    assert err.message == f'priorityclasses.{GROUP} "d2" is forbidden: {why}'
    err = refused(
        lambda: p.validate(
            attrs("UPDATE", "priorityclasses", "high", group=GROUP),
            klass("high", 1000, globalDefault=True),
            None,
        )
    )
    assert err.code == 403
    p.validate(
        attrs("UPDATE", "priorityclasses", "d1", group=GROUP),
        klass("d1", 10, globalDefault=True),
        None,
    )
    # a system class's delete is its storage's to refuse (as kube's REST), not the plugin's
    system = klass("system-node-critical", 2000001000)
    p.validate(
        attrs("DELETE", "priorityclasses", "system-node-critical", group=GROUP), system, system
    )
    p.validate(attrs("DELETE", "priorityclasses", "high", group=GROUP), None, klass("high", 1000))
