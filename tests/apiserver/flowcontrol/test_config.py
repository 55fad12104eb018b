"""The live configuration: bootstrap objects, seat split, Dangling status, upkeep."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from platform_api.apiserver.flowcontrol.config import FlowControlConfig
from platform_api.registry import flowcontrol_bootstrap as bootstrap
from tests.apiserver.flowcontrol.conftest import World


def _names(world: World, store: str) -> set[str]:
    s = world.schemas if store == "fs" else world.levels
    from platform_api.storage.interface import ListOptions

    return {o.object["metadata"]["name"] for o in s.list("", ListOptions()).items}


def test_bootstrap_objects_exist(world: World) -> None:
    assert _names(world, "fs") == {
        "exempt",
        "probes",
        "system-leader-election",
        "system-node-high",
        "system-nodes",
        "kube-controller-manager",
        "kube-scheduler",
        "platform-system-service-accounts",
        "service-accounts",
        "global-default",
        "catch-all",
    }
    assert _names(world, "plc") == {
        "exempt",
        "catch-all",
        "system",
        "node-high",
        "leader-election",
        "workload-high",
        "workload-low",
        "global-default",
    }
    sa = world.schemas.get("", "platform-system-service-accounts").object
    subject = sa["spec"]["rules"][0]["subjects"][0]
    assert subject["serviceAccount"] == {"name": "*", "namespace": "platform-system"}
    assert sa["metadata"]["annotations"] == {"apf.platform.io/autoupdate-spec": "true"}


def test_bootstrap_and_status_writers_own_what_kubes_own(world: World) -> None:
    """The producer's Update of the object and the consumer's Apply of its Dangling
    condition, as kube's flowschema fixture holds them (times aside)."""
    world.clock.advance(0.2)
    fixture = Path(__file__).parents[2] / "codec" / "kube" / "flowschema.json"
    text = fixture.read_text().replace("k8s.io", "platform.io")
    kube = json.loads(text.replace("apf.kubernetes.io", "apf.platform.io"))
    ours = world.schemas.get("", "service-accounts").object

    def entries(obj: dict) -> list[dict]:
        return [
            {k: v for k, v in e.items() if k != "time"} for e in obj["metadata"]["managedFields"]
        ]

    assert entries(ours) == entries(kube)


def test_seats_are_split_by_shares(world: World) -> None:
    config: FlowControlConfig = world.config
    # 600 seats over shares 5+20+10+40+30+40+100 (+0 exempt) = 245: ceil(600 * s / 245)
    assert config.levels["global-default"].nominal == 49
    assert config.levels["workload-low"].nominal == 245
    assert config.levels["catch-all"].nominal == 13
    assert config.levels["exempt"].queues is None


def test_flow_schemas_report_dangling(world: World) -> None:
    world.create(
        world.schemas,
        {
            "apiVersion": f"{bootstrap.GROUP}/v1",
            "kind": "FlowSchema",
            "metadata": {"name": "lost"},
            "spec": {"priorityLevelConfiguration": {"name": "nowhere"}, "matchingPrecedence": 50},
        },
    )
    world.clock.advance(0.2)
    (condition,) = world.schemas.get("", "lost").object["status"]["conditions"]
    assert condition["type"] == "Dangling" and condition["status"] == "True"
    assert condition["reason"] == "NotFound"
    assert condition["message"] == (
        'This FlowSchema references the PriorityLevelConfiguration object named "nowhere" '
        "but there is no such object"
    )
    found = world.schemas.get("", "exempt").object["status"]["conditions"][0]
    assert (found["status"], found["reason"]) == ("False", "Found")


def test_mandatory_spec_is_put_back_and_suggested_respects_opt_out(world: World) -> None:
    catch_all = copy.deepcopy(world.levels.get("", "catch-all").object)
    assert bootstrap.revise(catch_all, bootstrap.MANDATORY_LEVELS[1], True) is None
    changed = copy.deepcopy(world.levels.get("", "global-default").object)
    changed["spec"]["limited"]["nominalConcurrencyShares"] = 7
    revised = bootstrap.revise(changed, bootstrap.SUGGESTED_LEVELS[-1], False)
    assert revised is not None and revised["spec"]["limited"]["nominalConcurrencyShares"] == 20
    changed["metadata"]["annotations"][bootstrap.AUTOUPDATE] = "false"
    assert bootstrap.revise(changed, bootstrap.SUGGESTED_LEVELS[-1], False) is None
    # Without the annotation a spec someone changed (generation > 1) is theirs.
    del changed["metadata"]["annotations"][bootstrap.AUTOUPDATE]
    changed["metadata"]["generation"] = 2
    kept = bootstrap.revise(changed, bootstrap.SUGGESTED_LEVELS[-1], False)
    assert kept is not None and kept["spec"]["limited"]["nominalConcurrencyShares"] == 7
    assert kept["metadata"]["annotations"][bootstrap.AUTOUPDATE] == "false"


def test_deleted_mandatory_object_comes_back(world: World) -> None:
    world.run(world.levels.delete("", "catch-all"))
    assert "catch-all" not in world.config.levels
    world.run(world.config.ensure())
    assert "catch-all" in world.config.levels
