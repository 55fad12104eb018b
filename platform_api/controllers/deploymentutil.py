"""The arithmetic of Deployments (kube's pkg/controller/deployment/util): surge and
unavailability budgets, which ReplicaSet is the new one, revisions and the annotations
that carry them, proportional scaling, and the status and conditions kubectl reads.

Functions take and return plain objects; none writes anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import orjson

from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NOT_COPIED = {LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED, MAX_REPLICAS, ROLLBACK_TO}
MAX_HISTORY_CHARS = 2000
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.SafeEncodeString alphabet


def replicas(obj: Obj) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def status_of(obj: Obj, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def template_hash(template: Obj, collisions: int | None) -> str:
    """A short name for a pod template, as kube's ComputeHash: FNV-1a (32 bits) over the
    template (and the collision count, when there is one), its decimal digits spelled in
    the safe alphabet.  kube hashes Go's printout of its struct; this hashes the template's
    canonical JSON, so names differ from kube's but are as stable."""
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collisions is not None:
        data += collisions.to_bytes(4, "little")
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(value))


def safe_encode(text: str) -> str:
    """apimachinery's rand.SafeEncodeString: each character mapped into an alphabet
    without vowels or look-alikes."""
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in text)


def without_hash(template: Obj) -> Obj:
    meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    return {**template, "metadata": meta}


def equal_ignore_hash(a: Obj, b: Obj) -> bool:
    return without_hash(a) == without_hash(b)


def created_order(rs: Obj) -> tuple[float, str]:
    meta = rs["metadata"]
    return parse_timestamp(meta.get("creationTimestamp")) or 0.0, meta["name"]


def find_new(d: Obj, rs_list: list[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template is the Deployment's."""
    template = d["spec"]["template"]
    for rs in sorted(rs_list, key=created_order):
        if equal_ignore_hash(rs["spec"]["template"], template):
            return rs
    return None


def revision(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr's GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        return int(text)
    scaled = int(text[:-1]) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def rolling(d: Obj) -> bool:
    return (d["spec"].get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"


def fenceposts(d: Obj) -> tuple[int, int]:
    """(max surge, max unavailable), never both 0 (kube's ResolveFenceposts)."""
    params = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
    want = replicas(d)
    surge = scaled_value(params.get("maxSurge", 0), want, True)
    unavailable = scaled_value(params.get("maxUnavailable", 0), want, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return fenceposts(d)[0] if rolling(d) else 0


def max_unavailable(d: Obj) -> int:
    if not rolling(d) or replicas(d) == 0:
        return 0
    return min(fenceposts(d)[1], replicas(d))


def new_rs_replicas(d: Obj, all_rs: list[Obj], new_rs: Obj) -> int:
    """How big the new ReplicaSet may be now (kube's NewRSNewReplicas)."""
    if not rolling(d):
        return replicas(d)
    current = sum(replicas(rs) for rs in all_rs)
    ceiling = replicas(d) + max_surge(d)
    if current >= ceiling:
        return replicas(new_rs)
    return replicas(new_rs) + min(ceiling - current, replicas(d) - replicas(new_rs))


def set_replicas_annotations(rs: Obj, desired: int, ceiling: int) -> bool:
    annotations = rs["metadata"].setdefault("annotations", {})
    changed = annotations.get(DESIRED) != str(desired) or annotations.get(MAX_REPLICAS) != str(
        ceiling
    )
    annotations[DESIRED], annotations[MAX_REPLICAS] = str(desired), str(ceiling)
    return changed


def set_new_rs_annotations(d: Obj, rs: Obj, new_revision: int, exists: bool) -> bool:
    """Copy the Deployment's annotations and move the revision forward, keeping the old
    ones in revision-history (kube's SetNewReplicaSetAnnotations)."""
    annotations = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in (d["metadata"].get("annotations") or {}).items():
        if key not in NOT_COPIED and annotations.get(key) != value:
            annotations[key] = value
            changed = True
    old = annotations.get(REVISION)
    try:
        old_number = int(old) if old is not None else 0
    except ValueError:
        return False
    if old_number < new_revision:
        annotations[REVISION] = str(new_revision)
        changed = True
        if old is not None:
            history = [h for h in annotations.get(REVISION_HISTORY, "").split(",") if h]
            history.append(old)
            while len(",".join(history)) > MAX_HISTORY_CHARS:
                history.pop(0)
            annotations[REVISION_HISTORY] = ",".join(history)
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def proportion(rs: Obj, d: Obj, to_add: int, added: int) -> int:
    """This ReplicaSet's share of a scaling of the Deployment (kube's
    GetReplicaSetProportion), from the size the Deployment had when it was last scaled."""
    if replicas(rs) == 0 or to_add in (0, added):
        return 0
    if replicas(d) == 0:
        fraction = -replicas(rs)
    else:
        ceiling = replicas(d) + max_surge(d)
        try:
            before = int((rs["metadata"].get("annotations") or {}).get(MAX_REPLICAS, "0"))
        except ValueError:
            before = 0
        before = before or status_of(d, "replicas")
        if before == 0:
            return 0
        fraction = _round_half_away(replicas(rs) * ceiling / before) - replicas(rs)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _round_half_away(value: float) -> int:
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def active_sets(rs_list: Sequence[Obj | None]) -> list[Obj]:
    return [rs for rs in rs_list if rs is not None and replicas(rs) > 0]


def active_or_latest(new: Obj | None, old: list[Obj]) -> Obj | None:
    """The one ReplicaSet with pods wanted, or (none has) the new or newest one."""
    active = active_sets([*old, new])
    if len(active) == 1:
        return active[0]
    if active:
        return None
    if new is not None:
        return new
    return max(old, key=created_order) if old else None


def saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    desired = (rs["metadata"].get("annotations") or {}).get(DESIRED, "")
    want = replicas(d)
    return (
        replicas(rs) == want and desired == str(want) and status_of(rs, "availableReplicas") == want
    )


def creation_rank(rs: Obj, newer_first: bool) -> tuple[float, str]:
    stamp, name = created_order(rs)
    return (-stamp, name) if newer_first else (stamp, name)


def set_revision(d: Obj, revision: str) -> bool:
    annotations = d["metadata"].setdefault("annotations", {})
    if annotations.get(REVISION) == revision:
        return False
    annotations[REVISION] = revision
    return True
