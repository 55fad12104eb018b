"""kube's bootstrap FlowSchemas and PriorityLevelConfigurations, and their upkeep.

As kube's ``priority-and-fairness-config-producer`` post-start hook: the mandatory
objects (``exempt``, ``catch-all``) are created when missing and their spec put back
whenever it drifts; the suggested ones are created when missing and updated only while
``apf.platform.io/autoupdate-spec`` says ``true`` (or, without the annotation, while
nobody has changed the spec: generation 1).  Objects this server once made that are no
longer bootstrap objects (annotation ``true``) are deleted.  Runs at start and then
every minute.
"""

from __future__ import annotations

import copy
from typing import Any

from twisted.logger import Logger

from platform_api import errors
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions

log = Logger()
GROUP = "flowcontrol.apiserver.platform.io"
API_VERSION = f"{GROUP}/v1"
AUTOUPDATE = "apf.platform.io/autoupdate-spec"
PRODUCER = "api-priority-and-fairness-config-producer-v1"  # the field manager of its writes
Obj = dict[str, Any]

_EVERYTHING = {
    "resourceRules": [
        {
            "apiGroups": ["*"],
            "clusterScope": True,
            "namespaces": ["*"],
            "resources": ["*"],
            "verbs": ["*"],
        }
    ],
    "nonResourceRules": [{"nonResourceURLs": ["*"], "verbs": ["*"]}],
}
_SYSTEM_SA = {
    "kind": "ServiceAccount",
    "serviceAccount": {"name": "*", "namespace": "platform-system"},
}


def _group(name: str) -> Obj:
    return {"kind": "Group", "group": {"name": name}}


def _user(name: str) -> Obj:
    return {"kind": "User", "user": {"name": name}}


_ALL_USERS = [_group("system:unauthenticated"), _group("system:authenticated")]


def _plc(name: str, spec: Obj) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name, "annotations": {AUTOUPDATE: "true"}},
        "spec": spec,
    }


def _queued(shares: int, lendable: int, queues: int, hand: int) -> Obj:
    return {
        "type": "Limited",
        "limited": {
            "nominalConcurrencyShares": shares,
            "lendablePercent": lendable,
            "limitResponse": {
                "type": "Queue",
                "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": 50},
            },
        },
    }


def _fs(name: str, level: str, precedence: int, rules: list[Obj], by: str | None) -> Obj:
    spec: Obj = {
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": rules,
    }
    if by is not None:
        spec["distinguisherMethod"] = {"type": by}
    return {
        "apiVersion": API_VERSION,
        "kind": "FlowSchema",
        "metadata": {"name": name, "annotations": {AUTOUPDATE: "true"}},
        "spec": spec,
    }


def _all_of(subjects: list[Obj]) -> list[Obj]:
    return [{"subjects": subjects, **copy.deepcopy(_EVERYTHING)}]


MANDATORY_LEVELS = [
    _plc(
        "exempt",
        {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
    ),
    _plc(
        "catch-all",
        {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 5,
                "lendablePercent": 0,
                "limitResponse": {"type": "Reject"},
            },
        },
    ),
]
MANDATORY_SCHEMAS = [
    _fs("exempt", "exempt", 1, _all_of([_group("system:masters")]), None),
    _fs("catch-all", "catch-all", 10000, _all_of(_ALL_USERS), "ByUser"),
]
SUGGESTED_LEVELS = [
    _plc("system", _queued(30, 33, 64, 6)),
    _plc("node-high", _queued(40, 25, 64, 6)),
    _plc("leader-election", _queued(10, 0, 16, 4)),
    _plc("workload-high", _queued(40, 50, 128, 6)),
    _plc("workload-low", _queued(100, 90, 128, 6)),
    _plc("global-default", _queued(20, 50, 128, 6)),
]
_LEASES = {"apiGroups": ["coordination.platform.io"], "namespaces": ["*"], "resources": ["leases"]}
SUGGESTED_SCHEMAS = [
    _fs("system-nodes", "system", 500, _all_of([_group("system:nodes")]), "ByUser"),
    _fs(
        "system-node-high",
        "node-high",
        400,
        [
            {
                "subjects": [_group("system:nodes")],
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "clusterScope": True,
                        "namespaces": ["*"],
                        "resources": ["nodes", "nodes/status"],
                        "verbs": ["*"],
                    },
                    {**_LEASES, "verbs": ["*"]},
                ],
            }
        ],
        "ByUser",
    ),
    _fs(
        "probes",
        "exempt",
        2,
        [
            {
                "subjects": _ALL_USERS,
                "nonResourceRules": [
                    {"nonResourceURLs": ["/healthz", "/readyz", "/livez"], "verbs": ["get"]}
                ],
            }
        ],
        None,
    ),
    _fs(
        "system-leader-election",
        "leader-election",
        100,
        [
            {
                "subjects": [
                    _user("system:kube-controller-manager"),
                    _user("system:kube-scheduler"),
                    _SYSTEM_SA,
                ],
                "resourceRules": [{**_LEASES, "verbs": ["get", "create", "update"]}],
            }
        ],
        "ByUser",
    ),
    _fs(
        "kube-controller-manager",
        "workload-high",
        800,
        _all_of([_user("system:kube-controller-manager")]),
        "ByNamespace",
    ),
    _fs(
        "kube-scheduler",
        "workload-high",
        800,
        _all_of([_user("system:kube-scheduler")]),
        "ByNamespace",
    ),
    _fs(
        "platform-system-service-accounts",
        "workload-high",
        900,
        _all_of([_SYSTEM_SA]),
        "ByNamespace",
    ),
    _fs(
        "service-accounts",
        "workload-low",
        9000,
        _all_of([_group("system:serviceaccounts")]),
        "ByUser",
    ),
    _fs("global-default", "global-default", 9900, _all_of(_ALL_USERS), "ByUser"),
]


def _should_update_spec(obj: Obj) -> bool:
    meta = obj.get("metadata") or {}
    value = _parse_bool((meta.get("annotations") or {}).get(AUTOUPDATE))
    if value is not None:
        return value
    return meta.get("generation") == 1


def _parse_bool(text: str | None) -> bool | None:
    """Go's strconv.ParseBool."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def revise(current: Obj, bootstrap: Obj, mandatory: bool) -> Obj | None:
    """The object to write back, or None when ``current`` is as it should be."""
    auto = mandatory or _should_update_spec(current)
    annotations = (current.get("metadata") or {}).get("annotations") or {}
    annotate = _parse_bool(annotations.get(AUTOUPDATE)) != auto
    spec_changed = auto and not _spec_equalish(current, bootstrap)
    if not (annotate or spec_changed):
        return None
    revised = copy.deepcopy(current)
    if spec_changed:
        revised["spec"] = copy.deepcopy(bootstrap["spec"])
    if annotate:
        meta = revised.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), AUTOUPDATE: str(auto).lower()}
    return revised


def _spec_equalish(current: Obj, bootstrap: Obj) -> bool:
    """Equal once the stored object's defaults are allowed for (kube's SpecEqualish)."""
    return _subset(bootstrap.get("spec"), current.get("spec"))


def _subset(want: Any, have: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_subset(v, have.get(k)) for k, v in want.items())
    if isinstance(want, list):
        return (
            isinstance(have, list)
            and len(want) == len(have)
            and all(_subset(w, h) for w, h in zip(want, have, strict=True))
        )
    return bool(want == have)


async def _ensure_one(store: Store, bootstrap: Obj, mandatory: bool) -> None:
    name = bootstrap["metadata"]["name"]
    try:
        current: Obj | None = store.get("", name).object
    except errors.StatusError:
        current = None
    if current is None:
        try:
            await store.create("", copy.deepcopy(bootstrap), track=store.tracker(PRODUCER))
        except errors.StatusError as e:
            if e.code != 409:
                raise
        return
    revised = revise(current, bootstrap, mandatory)
    if revised is None:
        return
    try:
        await store.update("", name, lambda _old: revised, track=store.tracker(PRODUCER))
    except errors.StatusError as e:
        if e.code != 409:  # updated concurrently: looked at again next round
            raise


async def _remove_unwanted(store: Store, wanted: set[str]) -> None:
    for stored in store.list("", ListOptions()).items:
        meta = stored.object.get("metadata") or {}
        if meta.get("name") in wanted:
            continue
        if _parse_bool((meta.get("annotations") or {}).get(AUTOUPDATE)) is not True:
            continue  # a user's object (no annotation) or one they took over
        try:
            await store.delete("", meta["name"])
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise


async def ensure(schemas: Store, levels: Store) -> bool:
    """One pass of the config producer; False (logged) when a write failed."""
    try:
        for store, mandatory, suggested in (
            (levels, MANDATORY_LEVELS, SUGGESTED_LEVELS),
            (schemas, MANDATORY_SCHEMAS, SUGGESTED_SCHEMAS),
        ):
            for obj in mandatory:
                await _ensure_one(store, obj, True)
            for obj in suggested:
                await _ensure_one(store, obj, False)
            await _remove_unwanted(store, {o["metadata"]["name"] for o in mandatory + suggested})
    except errors.StatusError as e:
        log.error("ensuring the priority and fairness configuration: {error}", error=e.message)
        return False
    return True
