"""kube's root-ca-certificate-publisher-controller: ``platform-root-ca.crt`` everywhere.

Every namespace gets a ConfigMap with the cluster's CA bundle under ``ca.crt``, which the
ServiceAccount admission plugin projects into each pod's API-access volume so that
in-cluster clients can verify the API server.  Deleted, it is recreated; edited, its data
and description are put back.  kube's ``kube-root-ca.crt``, rebranded; with upstream names
served it is kube's, name and annotation key (scheme/namespaces.py says why).
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.registry.store import Store
from platform_api.scheme.namespaces import root_ca_configmap
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]
DESCRIPTION_ANNOTATION = "platform.io/description"
UPSTREAM_DESCRIPTION_ANNOTATION = "kubernetes.io/description"
# kube's text, word for word: the Service here is also ``kubernetes`` in ``default``.
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)


class RootCAPublisher(Controller):
    """Keys are namespace names."""

    name = "root-ca-certificate-publisher-controller"

    def __init__(
        self,
        namespaces: Store,
        configmaps: Store,
        root_ca: str,
        *args: Any,
        upstream: bool = False,
    ) -> None:
        super().__init__(*args)
        self.namespaces = namespaces
        self.configmaps = configmaps
        self.data = {"ca.crt": root_ca}
        self.configmap = root_ca_configmap(upstream)
        self.annotation = UPSTREAM_DESCRIPTION_ANNOTATION if upstream else DESCRIPTION_ANNOTATION

    def resync(self) -> None:
        for stored in self.namespaces.list("", ListOptions()).items:
            self.enqueue(stored.object["metadata"]["name"])

    def watched(self) -> tuple[bytes, ...]:
        return (self.namespaces.prefix, self.configmaps.prefix)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.namespaces.prefix):
            if event.type == DELETED or event.stored is None:
                return
            ns = event.stored.object
            # kube: every added namespace, and updates of active ones.
            if event.prev is None or ns.get("status", {}).get("phase", "Active") == "Active":
                self.enqueue(ns["metadata"]["name"])
        elif (
            event.key.startswith(self.configmaps.prefix)
            and self.configmaps.name_of_key(event.key) == self.configmap
        ):
            stored = event.stored if event.stored is not None else event.prev
            if stored is not None:
                self.enqueue(stored.object["metadata"].get("namespace", ""))

    def current(self, obj: Obj) -> bool:
        annotations = obj.get("metadata", {}).get("annotations") or {}
        return obj.get("data") == self.data and bool(annotations.get(self.annotation))

    async def sync(self, namespace: str) -> float | None:
        name, annotation = self.configmap, self.annotation
        try:
            existing = self.configmaps.get(namespace, name).object
        except errors.StatusError as e:
            if e.code != 404:
                raise
            return await self._create(namespace)
        if self.current(existing):
            return None

        def fix(obj: Obj | None) -> Obj:
            assert obj is not None  # ConfigMaps are not created on update
            obj["data"] = dict(self.data)
            meta = obj.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {})}
            meta["annotations"][annotation] = DESCRIPTION
            return obj

        try:
            await self.configmaps.update(namespace, name, fix)
        except errors.StatusError as e:
            if e.code == 404:
                return 0.0  # deleted meanwhile: create it
            raise
        return None

    async def _create(self, namespace: str) -> float | None:
        # Controllers write past admission: do the NamespaceLifecycle check here, or a
        # terminating namespace would get its ConfigMap back as fast as it is deleted.
        try:
            ns = self.namespaces.get("", namespace).object
        except errors.StatusError:
            return None
        if ns["metadata"].get("deletionTimestamp") or ns.get("status", {}).get("phase") == (
            "Terminating"
        ):
            return None
        obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": self.configmap, "annotations": {self.annotation: DESCRIPTION}},
            "data": dict(self.data),
        }
        try:
            await self.configmaps.create(namespace, obj)
        except errors.StatusError as e:
            # 409: made meanwhile (its event queues a check).
            if e.code not in (404, 409):
                raise
        return None
