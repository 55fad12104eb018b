"""The legacy-serviceaccount-token-cleaner over real storage and a test clock: unused
auto-generated tokens are marked invalid, then deleted a period later."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.authentication.legacytokens import INVALID_SINCE, LAST_USED, TRACKING_CONFIGMAP
from platform_api.controllers.legacytokencleaner import LegacyTokenCleaner
from platform_api.controllers.legacytokenoptions import DAY, clean_up_period
from platform_api.controllers.serviceaccounttokens import NAME, TOKEN_TYPE, UID
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]


def _date(when: float) -> str:
    return datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%Y-%m-%d")


class World:
    def __init__(self, path: Path, since: str) -> None:
        self.cluster = Cluster(str(path))
        self.clock = self.cluster.clock
        self.clock.advance(time.time() + 3 * DAY)  # the Secrets were made 3 days ago
        self.store = {p: self.cluster.stores[("", "v1", p)] for p in ("secrets", "pods")}
        make = self.cluster.run
        make(
            self.cluster.stores[("", "v1", "namespaces")].create(
                "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
            )
        )
        make(
            self.cluster.stores[("", "v1", "configmaps")].create(
                "platform-system",
                {"metadata": {"name": TRACKING_CONFIGMAP}, "data": {"since": since}},
            )
        )
        listed = ["old", "used", "mounted", "broken-date"]
        account = {"metadata": {"name": "robot"}, "secrets": [{"name": n} for n in listed]}
        uid = make(self.cluster.stores[("", "v1", "serviceaccounts")].create("ns", account))
        self.uid = uid.object["metadata"]["uid"]
        self.token("old")
        self.token("used", {LAST_USED: _date(self.clock.seconds())})
        self.token("mounted")
        self.token("broken-date", {LAST_USED: "yesterday"})
        self.token("manual")  # not listed by its account: not auto-generated
        pod = {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "volumes": [{"name": "t", "secret": {"secretName": "mounted"}}],
            },
        }
        make(self.store["pods"].create("ns", pod))
        self.cleaner = LegacyTokenCleaner(
            self.cluster.stores[("", "v1", "secrets")],
            self.cluster.stores[("", "v1", "serviceaccounts")],
            self.store["pods"],
            self.cluster.stores[("", "v1", "configmaps")],
            "platform-system",
            DAY,  # a one-day period
            self.cluster.hub,
            self.clock,
        )

    def token(self, name: str, labels: dict[str, str] | None = None) -> None:
        secret = {
            "metadata": {
                "name": name,
                "labels": labels or {},
                "annotations": {NAME: "robot", UID: self.uid},
            },
            "type": TOKEN_TYPE,
        }
        self.cluster.run(self.store["secrets"].create("ns", secret))

    def labels(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ("old", "used", "mounted", "broken-date", "manual"):
            try:
                secret = self.store["secrets"].get("ns", name).object
            except errors.StatusError:
                out[name] = None
                continue
            out[name] = (secret["metadata"].get("labels") or {}).get(INVALID_SINCE, "")
        return out

    def day_passes(self) -> None:
        self.clock.advance(DAY)
        self.cluster.settle()


def test_unused_auto_generated_tokens_are_marked_then_deleted(tmp_path: Path) -> None:
    world = World(tmp_path, since="2026-01-01")
    world.cleaner.start()
    world.cluster.settle()
    today = _date(world.clock.seconds())
    kept = {"used": "", "mounted": "", "broken-date": "", "manual": ""}
    assert world.labels() == {"old": today, **kept}
    world.day_passes()  # invalid for one day: not longer than the period yet
    assert world.labels() == {"old": today, **kept}
    world.day_passes()
    # "used" was last used two days ago now: its turn to be marked.
    later = _date(world.clock.seconds())
    assert world.labels() == {"old": None, **kept, "used": later}
    world.cleaner.stop()


def test_tokens_of_kubes_type_are_marked_in_kubes_label(tmp_path: Path) -> None:
    """Under upstream names a kube-typed token Secret is cleaned up, in kube's words."""
    world = World(tmp_path, since="2026-01-01")
    world.cleaner.upstream = True
    upstream = {
        "metadata": {
            "name": "old",  # replaces the branded one of that name, listed by the account
            "annotations": {
                "kubernetes.io/service-account.name": "robot",
                "kubernetes.io/service-account.uid": world.uid,
            },
        },
        "type": "kubernetes.io/service-account-token",
    }
    world.cluster.run(world.store["secrets"].delete("ns", "old"))
    world.cluster.run(world.store["secrets"].create("ns", upstream))
    world.cleaner.start()
    world.cluster.settle()
    labels = world.store["secrets"].get("ns", "old").object["metadata"]["labels"]
    assert labels == {"kubernetes.io/legacy-token-invalid-since": _date(world.clock.seconds())}
    world.cleaner.stop()


def test_nothing_is_touched_until_a_period_after_tracking_began(tmp_path: Path) -> None:
    world = World(tmp_path, since=_date(time.time() + 3 * DAY))
    world.cleaner.start()
    world.cluster.settle()
    assert set(world.labels().values()) == {""}
    world.cleaner.stop()


def test_the_period_flag() -> None:
    assert clean_up_period(None) == 365 * DAY
    assert clean_up_period("48h") == 2 * DAY
    with pytest.raises(ConfigError) as e:
        clean_up_period("0s")
    assert str(e.value) == "invalid CleanUpPeriod: 0s"
