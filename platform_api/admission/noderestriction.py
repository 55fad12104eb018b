"""NodeRestriction: a kubelet may write only its own Node, lease and pods (kube's plugin).

The Node authorizer allows node and pod writes by kind; this plugin narrows them to the
node's own objects, for users ``system:node:<name>`` in ``system:nodes``.  Creates are
checked in the mutating phase, on the object as sent (before defaults add a service
account to every pod); updates and deletes in the validating phase, which sees the
stored object.  Errors are kube's ``admission.NewForbidden`` texts.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.authorization.node import lease_namespace_problem, node_identity
from platform_api.authorization.nodegraph import pod_configmaps, pod_secrets
from platform_api.registry.podannotations import MIRROR_ANNOTATION
from platform_api.registry.store import Store
from platform_api.scheme import namespaces

Obj = dict[str, Any]
LABEL_NAMESPACE_NODE_RESTRICTION = "node-restriction.platform.io"
# Labels a kubelet may set on its Node (kube's ``kubeletapis.IsKubeletLabel``).
KUBELET_LABELS = frozenset(
    (
        "platform.io/hostname",
        "topology.platform.io/zone",
        "topology.platform.io/region",
        "failure-domain.beta.platform.io/zone",
        "failure-domain.beta.platform.io/region",
        "beta.platform.io/instance-type",
        "node.platform.io/instance-type",
        "platform.io/os",
        "platform.io/arch",
        "beta.platform.io/os",
        "beta.platform.io/arch",
    )
)
KUBELET_LABEL_NAMESPACES = ("kubelet.platform.io", "node.platform.io")
# PVC fields a kubelet may change through status (volume expansion).
_PVC_STATUS_FIELDS = ("capacity", "conditions", "allocatedResourceStatuses", "allocatedResources")


def _in_namespace(namespace: str, domain: str) -> bool:
    return namespace == domain or namespace.endswith("." + domain)


def forbidden_labels(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """Changed labels a node may not set: node-restriction ones, and unknown platform ones."""
    changed = {
        k for k in new.keys() | old.keys() if (k in new, new.get(k)) != (k in old, old.get(k))
    }
    out = []
    for label in changed:
        namespace = label.split("/", 1)[0] if "/" in label else ""
        restricted = _in_namespace(namespace, LABEL_NAMESPACE_NODE_RESTRICTION)
        platform = _in_namespace(namespace, "platform.io")
        if restricted or (platform and not _kubelet_label(label, namespace)):
            out.append(label)
    return sorted(out)


def _kubelet_label(label: str, namespace: str) -> bool:
    return label in KUBELET_LABELS or any(
        _in_namespace(namespace, d) for d in KUBELET_LABEL_NAMESPACES
    )


class NodeRestriction:
    name = "NodeRestriction"

    def __init__(self, pods: Store, nodes: Store, upstream: bool = False) -> None:
        self._pods = pods
        self._nodes = nodes
        self._lease_namespaces = namespaces.names(namespaces.NODE_LEASE, upstream)

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None = None) -> None:
        if attrs.operation == "CREATE":
            self._check(attrs, obj, None)

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if attrs.operation != "CREATE":  # creates (PUTs that create too) were admitted
            self._check(attrs, obj, old)

    def _check(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return
        if not node:
            raise forbidden(attrs, obj, f'could not determine node from user "{attrs.user.name}"')
        key = (attrs.resource.group, attrs.resource.plural)
        if key == ("", "pods"):
            self._pod(node, attrs, obj, old)
        elif key == ("", "nodes"):
            self._node(node, attrs, obj, old)
        elif key == ("", "persistentvolumeclaims"):
            if attrs.subresource != "status":
                raise forbidden(attrs, obj, "may only update PVC status")
            self._claim_status(node, attrs, obj, old)
        elif key == ("", "serviceaccounts"):
            self._token(node, attrs, obj)
        elif key == ("coordination.platform.io", "leases"):
            self._lease(node, attrs, obj)
        elif key == ("resource.platform.io", "resourceslices"):
            self._slice(node, attrs, obj, old)
        elif key == ("storage.platform.io", "csinodes"):
            name = attrs.name if attrs.operation != "CREATE" else _name(obj)
            if name != node:
                raise forbidden(
                    attrs, obj, "can only access CSINode with the same name as the requesting node"
                )

    # -- pods -------------------------------------------------------------------------

    def _pod(self, node: str, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        op, sub = attrs.operation, attrs.subresource
        if sub == "status":
            if op != "UPDATE":
                raise forbidden(attrs, obj, f'unexpected operation "{op}"')
            self._pod_status(node, attrs, obj or {}, old or {})
        elif sub == "eviction":
            if op != "CREATE":
                raise forbidden(attrs, obj, f"unexpected operation {op}")
            name = attrs.name or _name(obj)
            if not name:
                raise forbidden(attrs, obj, "could not determine pod from request data")
            if _node_name(self._pods.get(attrs.namespace, name).object) != node:
                why = f"node {node} can only evict pods with spec.nodeName set to itself"
                raise forbidden(attrs, obj, why)
        elif sub:
            why = f"unexpected pod subresource \"{sub}\", only 'status' and 'eviction' are allowed"
            raise forbidden(attrs, obj, why)
        elif op == "CREATE":
            self._mirror_pod(node, attrs, obj or {})
        elif op == "DELETE":
            if _node_name(old or self._pods.get(attrs.namespace, attrs.name).object) != node:
                why = f'node "{node}" can only delete pods with spec.nodeName set to itself'
                raise forbidden(attrs, obj, why)
        else:
            why = (
                f'unexpected operation "{op}", node "{node}" can only create and delete mirror pods'
            )
            raise forbidden(attrs, obj, why)

    def _mirror_pod(self, node: str, attrs: Attributes, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        if MIRROR_ANNOTATION not in (meta.get("annotations") or {}):
            why = f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can only create mirror pods'
            raise forbidden(attrs, pod, why)
        if spec.get("nodeName") != node:
            why = f'node "{node}" can only create pods with spec.nodeName set to itself'
            raise forbidden(attrs, pod, why)
        self._mirror_owner(node, attrs, pod)
        refused = _mirror_references(spec)
        if refused:
            raise forbidden(
                attrs, pod, f'node "{node}" can not create pods that reference {refused}'
            )

    def _mirror_owner(self, node: str, attrs: Attributes, pod: Obj) -> None:
        owners = (pod.get("metadata") or {}).get("ownerReferences") or []
        prefix = f'node "{node}"'
        if len(owners) > 1:
            raise forbidden(
                attrs,
                pod,
                f"{prefix} can only create pods with a single owner reference set to itself",
            )
        owner = owners[0] if owners else {}
        if (owner.get("apiVersion"), owner.get("kind"), owner.get("name")) != ("v1", "Node", node):
            raise forbidden(
                attrs, pod, f"{prefix} can only create pods with an owner reference set to itself"
            )
        if owner.get("controller") is not True:
            why = f"{prefix} can only create pods with a controller owner reference set to itself"
            raise forbidden(attrs, pod, why)
        if owner.get("blockOwnerDeletion") is True:
            raise forbidden(
                attrs, pod, f"{prefix} must not set blockOwnerDeletion on an owner reference"
            )
        uid = self._nodes.get("", node).object["metadata"].get("uid", "")  # 404 if absent
        if owner.get("uid", "") != uid:
            why = f"node {node} UID mismatch: expected {owner.get('uid', '')} got {uid}"
            raise forbidden(attrs, pod, why)

    def _pod_status(self, node: str, attrs: Attributes, pod: Obj, old: Obj) -> None:
        if _node_name(old) != node:
            why = f'node "{node}" can only update pod status for pods with spec.nodeName set to itself'
            raise forbidden(attrs, pod, why)
        if _labels(pod) != _labels(old):
            raise forbidden(attrs, pod, f'node "{node}" cannot update labels through pod status')
        claims = [
            ((pod.get("status") or {}).get("resourceClaimStatuses") or []),
            ((old.get("status") or {}).get("resourceClaimStatuses") or []),
        ]
        pairs = [[(s.get("name"), s.get("resourceClaimName")) for s in c] for c in claims]
        if pairs[0] != pairs[1]:
            raise forbidden(attrs, pod, f'node "{node}" cannot update resource claim statues')

    # -- nodes, claims, tokens, leases ------------------------------------------------

    def _node(self, node: str, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if attrs.name != node:
            raise forbidden(
                attrs, obj, f'node "{node}" is not allowed to modify node "{attrs.name}"'
            )
        if attrs.operation not in ("CREATE", "UPDATE") or obj is None:
            return
        spec, labels = obj.get("spec") or {}, _labels(obj)
        if attrs.operation == "CREATE":
            if spec.get("configSource") is not None:
                why = f'node "{node}" is not allowed to create pods with a non-nil configSource'
                raise forbidden(attrs, obj, why)
            refused = forbidden_labels(labels, {})
            if refused:
                why = f'node "{node}" is not allowed to set the following labels: {", ".join(refused)}'
                raise forbidden(attrs, obj, why)
            return
        old_spec = (old or {}).get("spec") or {}
        if spec.get("configSource") is not None and spec["configSource"] != old_spec.get(
            "configSource"
        ):
            why = (
                f'node "{node}" is not allowed to update configSource to a new non-nil configSource'
            )
            raise forbidden(attrs, obj, why)
        if (spec.get("taints") or []) != (old_spec.get("taints") or []):
            raise forbidden(attrs, obj, f'node "{node}" is not allowed to modify taints')
        refused = forbidden_labels(labels, _labels(old or {}))
        if refused:
            raise forbidden(attrs, obj, f"is not allowed to modify labels: {', '.join(refused)}")

    def _claim_status(self, node: str, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if attrs.operation != "UPDATE":
            raise forbidden(attrs, obj, f'unexpected operation "{attrs.operation}"')
        new_view, old_view = _claim_view(obj or {}), _claim_view(old or {})
        if new_view != old_view:
            changed = sorted(
                k for k in new_view.keys() | old_view.keys() if new_view.get(k) != old_view.get(k)
            )
            why = (
                f'node "{node}" is not allowed to update fields other than status.capacity and '
                f"status.conditions: {', '.join(changed)}"
            )
            raise forbidden(attrs, obj, why)

    def _token(self, node: str, attrs: Attributes, obj: Obj | None) -> None:
        if attrs.operation != "CREATE" or attrs.subresource != "token":
            return
        ref = ((obj or {}).get("spec") or {}).get("boundObjectRef") or {}
        if ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod" or not ref.get("name"):
            raise forbidden(attrs, obj, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise forbidden(attrs, obj, "node requested token with a pod binding without a uid")
        pod = self._pods.get(attrs.namespace, ref["name"]).object
        if ref["uid"] != pod["metadata"].get("uid"):
            why = (
                f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
                "record. The object might have been deleted and then recreated"
            )
            raise forbidden(attrs, obj, why)
        if _node_name(pod) != node:
            raise forbidden(
                attrs, obj, "node requested token bound to a pod scheduled on a different node"
            )

    def _lease(self, node: str, attrs: Attributes, obj: Obj | None) -> None:
        why = lease_namespace_problem(attrs.namespace, self._lease_namespaces)
        if why:
            raise forbidden(attrs, obj, why)
        name = _name(obj) if attrs.operation == "CREATE" else attrs.name
        if name != node:
            raise forbidden(
                attrs, obj, "can only access node lease with the same name as the requesting node"
            )

    def _slice(self, node: str, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        """kube's admitResourceSlice: a node creates and deletes only its own slices (the
        node authorizer cannot see a create's object, nor each of a collection's)."""
        for operation, shown, verb in (("CREATE", obj, "create"), ("DELETE", old, "delete")):
            if attrs.operation != operation:
                continue
            if ((shown or {}).get("spec") or {}).get("nodeName") != node:
                why = f"can only {verb} ResourceSlice with the same NodeName as the requesting node"
                raise forbidden(attrs, obj, why)


def _name(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("name") or "")


def _node_name(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _labels(obj: Obj) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def _mirror_references(spec: Obj) -> str:
    """What a mirror pod may not reference, in kube's order of checks ("" if nothing)."""
    if spec.get("serviceAccountName"):
        return "a service account"
    if pod_secrets(spec):
        return "secrets"
    if pod_configmaps(spec):
        return "configmaps"
    volumes = spec.get("volumes") or []
    for volume in volumes:
        for source in (volume.get("projected") or {}).get("sources") or []:
            if source.get("clusterTrustBundle") is not None:
                return "clustertrustbundles"
    if any(v.get("persistentVolumeClaim") is not None for v in volumes):
        return "persistentvolumeclaims"
    return ""


def _claim_view(pvc: Obj) -> Obj:
    """A claim without what a node may change (and the write's bookkeeping)."""
    view = {k: v for k, v in pvc.items() if k not in ("metadata", "status")}
    meta = {
        k: v
        for k, v in (pvc.get("metadata") or {}).items()
        if k not in ("resourceVersion", "managedFields")
    }
    status = {k: v for k, v in (pvc.get("status") or {}).items() if k not in _PVC_STATUS_FIELDS}
    return {**view, "metadata": meta, "status": status}


def build(ctx: PluginContext) -> NodeRestriction:
    pods, nodes = ctx.stores[("", "v1", "pods")], ctx.stores[("", "v1", "nodes")]
    return NodeRestriction(pods, nodes, ctx.config.serve_upstream_groups)
