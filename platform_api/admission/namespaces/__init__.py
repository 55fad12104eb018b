"""kube's namespace plugins that are off by default: NamespaceAutoProvision and
NamespaceExists (NamespaceLifecycle, on by default, is ``admission/lifecycle.py``)."""

from __future__ import annotations

from platform_api.admission.interface import Attributes


def in_namespace(attrs: Attributes) -> bool:
    """Whether the request is for namespaced content, not for a Namespace itself."""
    rt = attrs.resource
    return bool(attrs.namespace) and not (rt.group == "" and rt.kind == "Namespace")
