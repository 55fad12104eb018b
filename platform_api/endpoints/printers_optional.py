"""Table columns of the kinds served through ``--runtime-config`` and of networking's
address kinds (kube's internalversion printers): what ``kubectl get leasecandidates``,
``get resourceclaims`` or ``get ipaddresses`` shows.

Columns belong to a group and resource, whatever the version, as kube's printers do.
"""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.printers import AGE, created, register
from platform_api.endpoints.tables import Column

Obj = dict[str, Any]
_RESOURCE = "resource.platform.io"
# kube's column descriptions: the fields' API documentation.
_SIGNER_DOC = (
    "signerName indicates the associated signer, if any.\n\nIn order to create or update a "
    "ClusterTrustBundle that sets signerName, you must have the following cluster-scoped "
    "permission: group=certificates.k8s.io resource=signers resourceName=<the signer name> "
    "verb=attest.\n\nIf signerName is not empty, then the ClusterTrustBundle object must be "
    "named with the signer name as a prefix (translating slashes to colons). For example, for "
    "the signer name `example.com/foo`, valid ClusterTrustBundle object names include "
    "`example.com:foo:abc` and `example.com:foo:v1`.\n\nIf signerName is empty, then the "
    "ClusterTrustBundle object's name must not have such a prefix.\n\nList/watch requests for "
    "ClusterTrustBundles can filter on this field using a `spec.signerName=NAME` field selector."
)
_NODE_DOC = (
    "NodeName identifies the node which provides the resources in this pool. A field selector "
    "can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field "
    "can be used to limit access from nodes to ResourceSlices with the same node name. It also "
    "indicates to autoscalers that adding new nodes of the same type as some old node might "
    "also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, "
    "and PerDeviceNodeSelection must be set. This field is immutable."
)
_DRIVER_DOC = (
    "Driver identifies the DRA driver providing the capacity information. A field selector can "
    "be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS "
    "subdomain and should end with a DNS domain owned by the vendor of the driver. It should "
    "use only lower case characters. This field is immutable."
)
_POOL_DOC = (
    "Name is used to identify the pool. For node-local devices, this is often the node name, "
    "but this is not required.\n\nIt must not be longer than 253 characters and must consist "
    "of one or more DNS sub-domains separated by slashes. This field is immutable."
)


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def _claim_state(obj: Obj) -> str:
    """deleted, pending, allocated, reserved: kube's ``resourceClaimState``."""
    deleting = bool((obj.get("metadata") or {}).get("deletionTimestamp"))
    status = obj.get("status") or {}
    states = ["deleted"] if deleting else []
    if not status.get("allocation"):
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


register(
    "coordination.platform.io",
    "leasecandidates",
    (
        Column(
            "LeaseName",
            "string",
            "",
            "LeaseName is the name of the lease for which this candidate is contending. "
            "This field is immutable.",
        ),
        Column("BinaryVersion", "string"),
        Column("EmulationVersion", "string"),
        AGE,
    ),
    lambda obj: [
        _spec(obj).get("leaseName", ""),
        _spec(obj).get("binaryVersion", ""),
        _spec(obj).get("emulationVersion", ""),
        created(obj),
    ],
)
register(
    "certificates.platform.io",
    "clustertrustbundles",
    (Column("SignerName", "string", "", _SIGNER_DOC),),
    lambda obj: [_spec(obj).get("signerName") or "<none>"],
)
register(
    "storage.platform.io",
    "volumeattributesclasses",
    (Column("DriverName", "string", "", "Name of the CSI driver This field is immutable."), AGE),
    lambda obj: [obj.get("driverName", ""), created(obj)],
)
register(
    "networking.platform.io",
    "servicecidrs",
    (
        Column(
            "CIDRs",
            "string",
            "",
            'CIDRs defines the IP blocks in CIDR notation (e.g. "192.168.0.0/24" or '
            '"2001:db8::/64") from which to assign service cluster IPs. Max of two CIDRs is '
            "allowed, one of each IP family. This field is immutable.",
        ),
        AGE,
    ),
    lambda obj: [",".join(_spec(obj).get("cidrs") or []), created(obj)],
)


def _parent_ref(obj: Obj) -> str:
    ref = _spec(obj).get("parentRef")
    if not isinstance(ref, dict):
        return "<none>"
    group = f".{ref['group']}" if ref.get("group") else ""
    namespace = f"{ref['namespace']}/" if ref.get("namespace") else ""
    return f"{ref.get('resource', '')}{group}/{namespace}{ref.get('name', '')}"


register(
    "networking.platform.io",
    "ipaddresses",
    (
        Column(
            "ParentRef",
            "string",
            "",
            "ParentRef references the resource that an IPAddress is attached to. An IPAddress "
            "must reference a parent object.",
        ),
    ),
    # kube's row carries the age too, though no column names it
    lambda obj: [_parent_ref(obj), created(obj)],
)
for _group, _plural in (
    (_RESOURCE, "deviceclasses"),
    (_RESOURCE, "resourceclaimtemplates"),
    ("scheduling.platform.io", "workloads"),
):
    register(_group, _plural, (AGE,), lambda obj: [created(obj)])
register(
    _RESOURCE,
    "resourceclaims",
    (
        Column(
            "State",
            "string",
            "",
            "A summary of the current state (allocated, pending, reserved, etc.).",
        ),
        AGE,
    ),
    lambda obj: [_claim_state(obj), created(obj)],
)
register(
    _RESOURCE,
    "resourceslices",
    (
        Column("Node", "string", "", _NODE_DOC),
        Column("Driver", "string", "", _DRIVER_DOC),
        Column("Pool", "string", "", _POOL_DOC),
        AGE,
    ),
    lambda obj: [
        _spec(obj).get("nodeName") or "",
        _spec(obj).get("driver", ""),
        (_spec(obj).get("pool") or {}).get("name", ""),
        created(obj),
    ],
)
