"""root-ca-certificate-publisher-controller over real storage, the hub and a Clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.controllers.rootcacert import DESCRIPTION, DESCRIPTION_ANNOTATION, RootCAPublisher
from platform_api.scheme.namespaces import ROOT_CA_CONFIGMAP
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_every_namespace_gets_the_ca_bundle_kept_as_published(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    namespaces = cluster.stores[("", "v1", "namespaces")]
    configmaps = cluster.stores[("", "v1", "configmaps")]
    cluster.run(namespaces.create("", namespace("before")))
    publisher = RootCAPublisher(namespaces, configmaps, CA, cluster.hub, cluster.clock)
    publisher.start()
    cluster.settle()
    cluster.run(namespaces.create("", namespace("after")))
    cluster.settle()
    for ns in ("before", "after"):
        cm = configmaps.get(ns, ROOT_CA_CONFIGMAP).object
        assert cm["data"] == {"ca.crt": CA}
        assert cm["metadata"]["annotations"] == {DESCRIPTION_ANNOTATION: DESCRIPTION}
    assert DESCRIPTION.startswith("Contains a CA bundle that can be used to verify the kube-")

    # Edited: data and description are put back, other annotations stay.
    def edit(obj: Obj | None) -> Obj:
        assert obj is not None
        obj["data"] = {"ca.crt": "mine", "extra": "x"}
        obj["metadata"]["annotations"] = {"team": "a"}
        return obj

    cluster.run(configmaps.update("after", ROOT_CA_CONFIGMAP, edit))
    cluster.settle()
    cm = configmaps.get("after", ROOT_CA_CONFIGMAP).object
    assert cm["data"] == {"ca.crt": CA}
    assert cm["metadata"]["annotations"] == {"team": "a", DESCRIPTION_ANNOTATION: DESCRIPTION}
    # Deleted: recreated.
    cluster.run(configmaps.delete("after", ROOT_CA_CONFIGMAP))
    cluster.settle()
    assert configmaps.get("after", ROOT_CA_CONFIGMAP).object["data"] == {"ca.crt": CA}
    # A terminating namespace does not get it back (no fight with the namespace controller).
    cluster.run(namespaces.delete("", "before"))
    cluster.settle()
    cluster.run(configmaps.delete("before", ROOT_CA_CONFIGMAP))
    cluster.settle()
    with pytest.raises(errors.StatusError):
        configmaps.get("before", ROOT_CA_CONFIGMAP)
    publisher.stop()


def test_upstream_names_publish_kube_root_ca_instead(tmp_path: Path) -> None:
    """With kube's group names served, the ConfigMap is kube's ``kube-root-ca.crt`` (kube's
    annotation key), and only it: stock tools leave out that name alone."""
    cluster = Cluster(str(tmp_path))
    namespaces = cluster.stores[("", "v1", "namespaces")]
    configmaps = cluster.stores[("", "v1", "configmaps")]
    cluster.run(namespaces.create("", namespace("team")))
    publisher = RootCAPublisher(
        namespaces, configmaps, CA, cluster.hub, cluster.clock, upstream=True
    )
    publisher.start()
    cluster.settle()
    kube = configmaps.get("team", "kube-root-ca.crt").object
    assert kube["data"] == {"ca.crt": CA}
    assert kube["metadata"]["annotations"] == {"kubernetes.io/description": DESCRIPTION}
    with pytest.raises(errors.StatusError) as caught:
        configmaps.get("team", ROOT_CA_CONFIGMAP)
    assert caught.value.code == 404

    def empty(obj: Obj | None) -> Obj:
        assert obj is not None
        return {**obj, "data": {"ca.crt": ""}}

    cluster.run(configmaps.update("team", "kube-root-ca.crt", empty))
    cluster.settle()
    assert configmaps.get("team", "kube-root-ca.crt").object["data"] == {"ca.crt": CA}
    cluster.run(configmaps.delete("team", "kube-root-ca.crt"))
    cluster.settle()
    assert configmaps.get("team", "kube-root-ca.crt").object["data"] == {"ca.crt": CA}
    publisher.stop()


def test_without_upstream_names_only_the_branded_copy(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    namespaces = cluster.stores[("", "v1", "namespaces")]
    configmaps = cluster.stores[("", "v1", "configmaps")]
    cluster.run(namespaces.create("", namespace("team")))
    publisher = RootCAPublisher(namespaces, configmaps, CA, cluster.hub, cluster.clock)
    publisher.start()
    cluster.settle()
    with pytest.raises(errors.StatusError) as caught:
        configmaps.get("team", "kube-root-ca.crt")
    assert caught.value.code == 404
    publisher.stop()
