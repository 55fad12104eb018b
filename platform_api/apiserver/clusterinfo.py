"""What kubeadm adds to a cluster for bootstrap-token joins, made here at server start.

``cluster-info`` in ``platform-public`` holds a kubeconfig with just the server and its CA
(no credentials); a Role and RoleBinding, both ``kubeadm:bootstrap-signer-clusterinfo``,
let ``system:anonymous`` get it.  A joining client fetches it anonymously and trusts it once
a ``jws-kubeconfig-<token-id>`` signature (bootstrap-signer-controller) checks out with its
token.  Made only when that controller runs: without signatures the ConfigMap is useless.
Also here: which CA bundle the root-ca-certificate-publisher-controller publishes.
"""

from __future__ import annotations

import base64
from typing import Any

import yaml
from twisted.logger import Logger

from platform_api import errors
from platform_api.apiserver import pki
from platform_api.apiserver.config import ServerConfig
from platform_api.authorization.rbac.bootstrap import RBAC_GROUP
from platform_api.controllers.bootstrap import CLUSTER_INFO, KUBECONFIG_KEY
from platform_api.registry.store import Store
from platform_api.scheme import namespaces

log = Logger()
Obj = dict[str, Any]
ROLE = "kubeadm:bootstrap-signer-clusterinfo"


def root_ca_bundle(config: ServerConfig) -> bytes | None:
    """The CA that verifies this server: our own CA when we made the PKI, else the
    client CA file (kube-controller-manager's ``--root-ca-file`` has no equivalent here)."""
    path = pki.Paths.under(config.cert_dir).ca_cert if config.embedded_pki else ""
    path = path or config.client_ca_file
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        log.warn("cannot read the cluster CA bundle {path}: {error}", path=path, error=e)
        return None


def bootstrap_kubeconfig(server: str, ca_pem: bytes) -> str:
    """kubeadm's bootstrap kubeconfig: one unnamed cluster, nothing else (the layout
    ``clientcmd.Write`` gives it)."""
    cluster = {
        "certificate-authority-data": base64.b64encode(ca_pem).decode(),
        "server": server,
    }
    config: Obj = {
        "apiVersion": "v1",
        "clusters": [{"cluster": cluster, "name": ""}],
        "contexts": None,
        "current-context": "",
        "kind": "Config",
        "preferences": {},
        "users": None,
    }
    return str(yaml.safe_dump(config, sort_keys=False, default_flow_style=False))


def cluster_info_objects(
    server: str, ca_pem: bytes, namespace: str = namespaces.PUBLIC
) -> list[tuple[tuple[str, str, str], Obj]]:
    """(store key, object) for the ConfigMap, Role and RoleBinding, in creation order."""
    rbac_api = f"{RBAC_GROUP}/v1"
    meta = {"name": ROLE, "namespace": namespace}
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CLUSTER_INFO, "namespace": namespace},
        "data": {KUBECONFIG_KEY: bootstrap_kubeconfig(server, ca_pem)},
    }
    rule = {
        "verbs": ["get"],
        "apiGroups": [""],
        "resources": ["configmaps"],
        "resourceNames": [CLUSTER_INFO],
    }
    role = {"apiVersion": rbac_api, "kind": "Role", "metadata": dict(meta), "rules": [rule]}
    binding = {
        "apiVersion": rbac_api,
        "kind": "RoleBinding",
        "metadata": dict(meta),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": ROLE},
        "subjects": [{"kind": "User", "apiGroup": RBAC_GROUP, "name": "system:anonymous"}],
    }
    return [
        (("", "v1", "configmaps"), configmap),
        ((RBAC_GROUP, "v1", "roles"), role),
        ((RBAC_GROUP, "v1", "rolebindings"), binding),
    ]


async def ensure_cluster_info(
    stores: dict[tuple[str, str, str], Store], config: ServerConfig
) -> None:
    """Create what is missing (kept as it is when present: an operator may have set the
    advertised address); skipped, with a log line, when no CA bundle is known."""
    ca_pem = root_ca_bundle(config)
    if ca_pem is None:
        log.warn("no cluster CA bundle: not creating {name}", name=CLUSTER_INFO)
        return
    public = namespaces.names(namespaces.PUBLIC, config.serve_upstream_groups)
    for key, obj in (
        made for ns in public for made in cluster_info_objects(config.server_url, ca_pem, ns)
    ):
        store = stores[key]
        try:
            await store.create(obj["metadata"]["namespace"], obj)
        except errors.StatusError as e:
            if e.code != 409:
                log.error("creating {name}: {error}", name=obj["kind"], error=e.message)
