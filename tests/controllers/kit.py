"""What the controller tests over real storage share: a small cluster on a test clock,
controllers started on it, and writes that settle (events delivered, work run)."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]
Kind = tuple[str, str, str]  # (group, version, plural)


class ControllerSetup:
    def __init__(self, path: str) -> None:
        self.cluster = Cluster(path)
        self.controllers: list[Controller] = []

    def start(self, *controllers: Controller) -> None:
        self.controllers.extend(controllers)
        for controller in controllers:
            controller.start()

    def create(self, kind: Kind, obj: Obj, namespace: str = "") -> Obj:
        made = self.cluster.run(self.cluster.stores[kind].create(namespace, obj)).object
        self.cluster.settle()
        return made  # type: ignore[no-any-return]

    def delete(self, kind: Kind, name: str, namespace: str = "") -> None:
        self.cluster.run(self.cluster.stores[kind].delete(namespace, name))
        self.cluster.settle()

    def get(self, kind: Kind, name: str, namespace: str = "") -> Obj | None:
        try:
            return self.cluster.stores[kind].get(namespace, name).object  # type: ignore[no-any-return]
        except errors.StatusError:
            return None

    def wait(self, seconds: float) -> None:
        self.cluster.clock.advance(seconds)
        self.cluster.settle()
