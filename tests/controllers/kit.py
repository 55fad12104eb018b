"""What the controller tests over real storage share: a small cluster on a test clock,
controllers started on it, and writes that settle (events delivered, work run)."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.storage.interface import ListOptions
from platform_api.timestamps import format_timestamp
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

    def delete(
        self, kind: Kind, name: str, namespace: str = "", grace_period: int | None = None
    ) -> None:
        """As ``kubectl delete`` does: in the background (a Job's own default orphans)."""
        store = self.cluster.stores[kind]
        deleting = store.delete(
            namespace, name, grace_period=grace_period, propagation="Background"
        )
        self.cluster.run(deleting)
        self.cluster.settle()

    def get(self, kind: Kind, name: str, namespace: str = "") -> Obj | None:
        try:
            return self.cluster.stores[kind].get(namespace, name).object  # type: ignore[no-any-return]
        except errors.StatusError:
            return None

    def wait(self, seconds: float) -> None:
        self.cluster.clock.advance(seconds)
        self.cluster.settle()

    def change_spec(self, kind: Kind, name: str, namespace: str, **spec: Any) -> None:
        """Set fields of the object's spec (``image``: its first container's image)."""

        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            for key, value in spec.items():
                if key == "image":
                    existing["spec"]["template"]["spec"]["containers"][0]["image"] = value
                else:
                    existing["spec"][key] = value
            return existing

        self.cluster.run(self.cluster.stores[kind].update(namespace, name, write))
        self.wait(0.1)

    def set_labels(self, kind: Kind, name: str, namespace: str, labels: dict[str, str]) -> None:
        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            existing["metadata"]["labels"] = labels
            return existing

        self.cluster.run(self.cluster.stores[kind].update(namespace, name, write))
        self.wait(0.1)

    def run_pods(self, namespace: str, phase: str = "Running", only: str | None = None) -> None:
        """A stand-in kubelet: pods not yet in ``phase`` get it, Ready (then the
        controllers run)."""
        stamp = format_timestamp(self.cluster.clock.seconds())
        store = self.cluster.stores[("", "v1", "pods")]
        for stored in store.list(namespace, ListOptions()).items:
            pod = stored.object
            name = pod["metadata"]["name"]
            if (only is not None and name != only) or (pod.get("status") or {}).get(
                "phase"
            ) == phase:
                continue
            ready = {"type": "Ready", "status": "True", "lastTransitionTime": stamp}

            def write(existing: Obj | None, ready: Obj = ready) -> Obj:
                assert existing is not None
                existing["status"] = {"phase": phase, "conditions": [ready]}
                return existing

            self.cluster.run(store.update(namespace, name, write, subresource="status"))
        self.wait(0.1)
