"""The built-in certificate signers' names, and kube's for them under ``--serve-upstream-groups``.

kube's four signers live under ``kubernetes.io/``; here they are ``platform.io/``.  With
upstream group names served, stock clients send kube's names (client-go's kubelet
bootstrap, upstream's conformance cases, every "add a user" walkthrough), so there the
two names of a signer mean the same signer: it signs both, and the admission rules that
guard a signer guard both names.
"""

from __future__ import annotations

BRAND_DOMAIN = "platform.io"
UPSTREAM_DOMAIN = "kubernetes.io"

KUBE_APISERVER_CLIENT = "platform.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET = "platform.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "platform.io/kubelet-serving"
LEGACY_UNKNOWN = "platform.io/legacy-unknown"
BUILT_IN = (KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING, LEGACY_UNKNOWN)


def upstream_name(signer: str) -> str:
    """kube's name for a built-in signer (``kubernetes.io/...``)."""
    return UPSTREAM_DOMAIN + signer[len(BRAND_DOMAIN) :]


def canonical(name: str, upstream: bool) -> str:
    """The built-in signer ``name`` stands for, or ``name`` itself: kube's names are read as
    the branded ones only when upstream names are served."""
    if upstream and name.startswith(UPSTREAM_DOMAIN + "/"):
        branded = BRAND_DOMAIN + name[len(UPSTREAM_DOMAIN) :]
        if branded in BUILT_IN:
            return branded
    return name
