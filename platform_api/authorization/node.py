"""The Node authorizer: what a kubelet (``system:node:<name>``) may do, as kube decides it.

A node reads the secrets, config maps, volumes and claims of the pods bound to it and
nothing else (the ``NodeGraph`` answers which), only its own Node and pods (with
kube's ``AuthorizeNodeWithSelectors``, beta and on), and its own lease.  Other requests
are matched against kube's static node rules (``bootstrappolicy.NodeRules``): events,
node and pod writes, reviews, CSRs.  Writes it allows by kind are narrowed to the node's
own objects by the ``NodeRestriction`` admission plugin.  Anything it does not allow is
``NO_OPINION`` with kube's reason, so a later authorizer may still allow it.
"""

from __future__ import annotations

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision, RuleSet
from platform_api.authorization.nodegraph import NodeGraph
from platform_api.fieldselectors import parse_field_selector
from platform_api.scheme import namespaces
from platform_api.selectors import SelectorError

NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
COORDINATION = "coordination.platform.io"
STORAGE = "storage.platform.io"
RESOURCE = "resource.platform.io"
Result = tuple[Decision, str]
ALLOW: Result = (Decision.ALLOW, "")
NO_OPINION: Result = (Decision.NO_OPINION, "")

# kube's NodeRules(): (API group, resources, verbs), for kinds not decided per object.
NODE_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("authentication.platform.io", ("tokenreviews",), ("create",)),
    (
        "authorization.platform.io",
        ("subjectaccessreviews", "localsubjectaccessreviews"),
        ("create",),
    ),
    ("", ("services",), ("get", "list", "watch")),
    ("", ("nodes",), ("create", "get", "list", "watch", "update", "patch")),
    ("", ("nodes/status",), ("update", "patch")),
    ("", ("events",), ("create", "update", "patch")),
    ("", ("pods",), ("get", "list", "watch", "create", "delete")),
    ("", ("pods/status",), ("update", "patch")),
    ("", ("pods/eviction",), ("create",)),
    ("", ("secrets", "configmaps"), ("get", "list", "watch")),
    ("", ("persistentvolumeclaims", "persistentvolumes"), ("get",)),
    ("", ("endpoints",), ("get",)),
    (
        "certificates.platform.io",
        ("certificatesigningrequests",),
        ("create", "get", "list", "watch"),
    ),
    (COORDINATION, ("leases",), ("get", "create", "update", "patch", "delete")),
    (STORAGE, ("volumeattachments",), ("get",)),
    ("", ("serviceaccounts/token",), ("create",)),
    ("", ("persistentvolumeclaims/status",), ("get", "update", "patch")),
    (STORAGE, ("csidrivers",), ("get", "watch", "list")),
    (STORAGE, ("csinodes",), ("get", "create", "update", "patch", "delete")),
    ("node.platform.io", ("runtimeclasses",), ("get", "list", "watch")),
    (RESOURCE, ("resourceclaims",), ("get",)),
)


def node_identity(user: UserInfo) -> tuple[str, bool]:
    """(node name, whether the user is a node): kube's default node identifier."""
    if not user.name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in user.groups:
        return "", False
    return user.name[len(NODE_USER_PREFIX) :], True


def rules_allow(attrs: Attributes) -> bool:
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    return attrs.resource_request and any(
        attrs.api_group == group and resource in resources and attrs.verb in verbs
        for group, resources, verbs in NODE_RULES
    )


def _no_relationship(node: str) -> Result:
    return Decision.NO_OPINION, f"no relationship found between node '{node}' and this object"


def _own_object(node: str, attrs: Attributes, what: str, problem: str) -> Result:
    """An object named after the node (its lease, its CSINode); ``problem`` denies first."""
    if attrs.verb not in ("get", "create", "update", "patch", "delete"):
        return Decision.NO_OPINION, f"can only get, create, update, patch, or delete a {what}"
    if problem:
        return Decision.NO_OPINION, problem
    # The name of a create is unknown here; NodeRestriction checks it.
    if attrs.verb != "create" and attrs.name != node:
        return (
            Decision.NO_OPINION,
            f"can only access {what} with the same name as the requesting node",
        )
    return ALLOW


def _field_equals(selector: str, field: str, value: str) -> bool:
    try:
        parsed = parse_field_selector(selector)
    except SelectorError:
        return False
    return any(t.field == field and t.value == value and not t.negate for t in parsed.terms)


def lease_namespace_problem(namespace: str, allowed: tuple[str, ...]) -> str:
    """kube's refusal of a node's Lease outside the node-lease namespace ("": inside)."""
    if namespace in allowed:
        return ""
    return f'can only access leases in the "{allowed[0]}" system namespace'


class NodeAuthorizer:
    """kube's ``NodeAuthorizer`` over a ``NodeGraph``."""

    def __init__(self, graph: NodeGraph, upstream: bool = False) -> None:
        self.graph = graph
        self.lease_namespaces = namespaces.names(namespaces.NODE_LEASE, upstream)
        self._by_resource = {
            ("", "secrets"): self._read_namespaced,
            ("", "configmaps"): self._read_namespaced,
            ("", "persistentvolumeclaims"): self._claim,
            ("", "persistentvolumes"): self._get,
            (RESOURCE, "resourceclaims"): self._get,
            (RESOURCE, "resourceslices"): self._slice,
            (STORAGE, "volumeattachments"): self._get,
            ("", "serviceaccounts"): self._token,
            (COORDINATION, "leases"): self._lease,
            (STORAGE, "csinodes"): self._csinode,
            ("", "nodes"): self._node,
            ("", "pods"): self._pod,
        }

    async def authorize(self, attrs: Attributes) -> Result:
        return self.decide(attrs)

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """A node's rights depend on the graph, so they are never listed (kube's answer)."""
        if not node_identity(user)[1]:
            return RuleSet()
        errs = ["node authorizer does not support user rule resolution"]
        return RuleSet(incomplete=True, errors=errs)

    def decide(self, attrs: Attributes) -> Result:
        """Synchronous: every answer comes from memory."""
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return NO_OPINION
        if not node:
            return Decision.NO_OPINION, f'unknown node for user "{attrs.user.name}"'
        if attrs.resource_request:
            check = self._by_resource.get((attrs.api_group, attrs.resource))
            if check is not None:
                return check(node, attrs)
        return ALLOW if rules_allow(attrs) else NO_OPINION

    # -- graph-limited kinds ---------------------------------------------------------

    def _related(self, node: str, attrs: Attributes) -> Result:
        if not attrs.name:
            return Decision.NO_OPINION, "No Object name found"
        if self.graph.related(node, attrs.resource, attrs.namespace, attrs.name):
            return ALLOW
        return _no_relationship(node)

    def _read_namespaced(self, node: str, attrs: Attributes) -> Result:
        if attrs.verb not in ("get", "list", "watch"):
            return Decision.NO_OPINION, "can only read resources of this type"
        if attrs.subresource:
            return Decision.NO_OPINION, "cannot read subresource"
        if not attrs.namespace:
            return Decision.NO_OPINION, "can only read namespaced object of this type"
        return self._related(node, attrs)

    def _get(self, node: str, attrs: Attributes) -> Result:
        if attrs.verb != "get":
            return Decision.NO_OPINION, "can only get individual resources of this type"
        if attrs.subresource:
            return Decision.NO_OPINION, "cannot get subresource"
        return self._related(node, attrs)

    def _claim(self, node: str, attrs: Attributes) -> Result:
        if attrs.subresource != "status":
            return self._get(node, attrs)
        if attrs.verb not in ("update", "patch"):
            return Decision.NO_OPINION, "can only get/update/patch this type"
        return self._related(node, attrs)

    def _token(self, node: str, attrs: Attributes) -> Result:
        if attrs.verb != "create" or not attrs.name:
            return Decision.NO_OPINION, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return Decision.NO_OPINION, "can only create token subresource of serviceaccount"
        return self._related(node, attrs)

    def _slice(self, node: str, attrs: Attributes) -> Result:
        """kube's authorizeResourceSlice: a kubelet publishes its node's ResourceSlices
        (NodeRestriction checks the node of a create and a delete)."""
        verb = attrs.verb
        if attrs.subresource:
            return Decision.NO_OPINION, "cannot authorize ResourceSlice subresources"
        if verb == "create":
            return ALLOW
        if verb in ("get", "update", "patch", "delete"):
            return self._related(node, attrs)
        if verb in ("watch", "list", "deletecollection"):
            if _field_equals(attrs.field_selector, "spec.nodeName", node):
                return ALLOW
            why = "can only list/watch/deletecollection resourceslices with nodeName field selector"
            return Decision.NO_OPINION, why
        return (
            Decision.NO_OPINION,
            "only the following verbs are allowed for a ResourceSlice: get, watch, list, "
            "create, update, patch, delete, deletecollection",
        )

    # -- kinds limited by name -------------------------------------------------------

    def _lease(self, node: str, attrs: Attributes) -> Result:
        problem = lease_namespace_problem(attrs.namespace, self.lease_namespaces)
        return _own_object(node, attrs, "node lease", problem)

    def _csinode(self, node: str, attrs: Attributes) -> Result:
        problem = "cannot authorize CSINode subresources" if attrs.subresource else ""
        return _own_object(node, attrs, "CSINode", problem)

    def _node(self, node: str, attrs: Attributes) -> Result:
        verb, sub = attrs.verb, attrs.subresource
        if sub == "" and verb in ("create", "update", "patch"):
            return ALLOW  # NodeRestriction limits these to the node's own object
        if sub == "" and verb in ("get", "list", "watch"):
            # By name, not by the graph: a kubelet reads its Node before creating it.
            if attrs.name == node:
                return ALLOW
            if not attrs.name:
                return (
                    Decision.NO_OPINION,
                    f"node '{node}' cannot read all nodes, only its own Node object",
                )
            return (
                Decision.NO_OPINION,
                f"node '{node}' cannot read '{attrs.name}', only its own Node object",
            )
        if sub == "status" and verb in ("update", "patch"):
            return ALLOW
        return NO_OPINION

    def _pod(self, node: str, attrs: Attributes) -> Result:
        verb, sub = attrs.verb, attrs.subresource
        if sub == "":
            if verb == "get":
                return self._get(node, attrs)
            if verb in ("list", "watch"):
                if _field_equals(attrs.field_selector, "spec.nodeName", node):
                    return ALLOW
                if attrs.name:
                    return self._related(node, attrs)
                return (
                    Decision.NO_OPINION,
                    "can only list/watch pods with spec.nodeName field selector",
                )
            if verb in ("create", "delete"):
                return ALLOW  # mirror pods; NodeRestriction limits them to this node
        if sub == "status" and verb in ("update", "patch"):
            return ALLOW
        if sub == "eviction" and verb == "create":
            return ALLOW
        return NO_OPINION
