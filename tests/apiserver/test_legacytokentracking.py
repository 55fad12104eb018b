"""The legacy-token-tracking ConfigMap: made when missing (at most every 30 minutes),
its ``since`` rewritten when it is not a date."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from platform_api import errors
from platform_api.apiserver.legacytokentracking import (
    CONFIGMAP,
    CREATE_EVERY,
    LegacyTokenTracking,
)
from tests.authorization.rbac_cluster import Cluster

NOON = 1_796_040_000.0  # 2026-11-30T12:00:00Z


def _since(cluster: Cluster) -> Any:
    store = cluster.stores[("", "v1", "configmaps")]
    try:
        return store.get("platform-system", CONFIGMAP).object["data"]["since"]
    except errors.StatusError:
        return None


def test_the_configmap_is_made_remade_at_kubes_rate_and_mended(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    cluster.clock.advance(NOON)
    store = cluster.stores[("", "v1", "configmaps")]
    tracking = LegacyTokenTracking(store, "platform-system", cluster.hub, cluster.clock)
    tracking.start()
    cluster.settle()
    assert _since(cluster) == "2026-11-30"
    # A since that is no date is today's again.
    for wrong in ("30/11/2026", "2026-1-5", "2026-02-30"):
        cm = dict(store.get("platform-system", CONFIGMAP).object, data={"since": wrong})
        cluster.run(store.update("platform-system", CONFIGMAP, lambda _, cm=cm: cm))
        cluster.settle()
        assert _since(cluster) == "2026-11-30"
    # Deleted, it comes back once 30 minutes have passed since it was made.
    cluster.run(store.delete("platform-system", CONFIGMAP))
    cluster.settle()
    assert _since(cluster) is None
    cluster.clock.advance(CREATE_EVERY - 1)
    cluster.settle()
    assert _since(cluster) is None
    cluster.clock.advance(1)
    cluster.settle()
    assert _since(cluster) == "2026-11-30"
    tracking.stop()
