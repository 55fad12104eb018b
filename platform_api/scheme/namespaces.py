"""The system namespaces, and kube's names for them under ``--serve-upstream-groups``.

This server's system namespaces carry the brand (``platform-system``, ``platform-public``,
``platform-node-lease``).  Stock software assumes kube's (an aggregated server built on
k8s.io/apiserver reads ``kube-system/extension-apiserver-authentication``, a kubelet or
kwok renews its Lease in ``kube-node-lease``, tools take ``kube-system``'s uid as the
cluster's id), so with upstream group names kube's namespaces exist too, each with what
kube keeps in it: they are namespaces of their own, not aliases.

The root CA ConfigMap every namespace holds is kube's ``kube-root-ca.crt`` then, in place
of ``platform-root-ca.crt``: it is in every namespace, and stock tools that list a
namespace's ConfigMaps leave out kube's name only.
"""

from __future__ import annotations

DEFAULT = "default"
SYSTEM = "platform-system"
PUBLIC = "platform-public"
NODE_LEASE = "platform-node-lease"
UPSTREAM = {SYSTEM: "kube-system", PUBLIC: "kube-public", NODE_LEASE: "kube-node-lease"}
ROOT_CA_CONFIGMAP = "platform-root-ca.crt"
UPSTREAM_ROOT_CA_CONFIGMAP = "kube-root-ca.crt"


def root_ca_configmap(upstream: bool) -> str:
    """The name of the root CA ConfigMap in every namespace."""
    return UPSTREAM_ROOT_CA_CONFIGMAP if upstream else ROOT_CA_CONFIGMAP


def names(namespace: str, upstream: bool) -> tuple[str, ...]:
    """A system namespace's names: its own, then kube's when upstream names are served."""
    return (namespace, UPSTREAM[namespace]) if upstream else (namespace,)


def system_namespaces(upstream: bool) -> tuple[str, ...]:
    """Every namespace the server creates at start."""
    return (
        DEFAULT,
        *names(SYSTEM, upstream),
        *names(PUBLIC, upstream),
        *names(NODE_LEASE, upstream),
    )


def immortal(upstream: bool) -> tuple[str, ...]:
    """The namespaces NamespaceLifecycle refuses to delete (not the node-lease one)."""
    return (DEFAULT, *names(SYSTEM, upstream), *names(PUBLIC, upstream))
