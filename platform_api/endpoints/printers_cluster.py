"""Table columns of CertificateSigningRequests, RuntimeClasses, EndpointSlices and
APIServices (kube's printers): what ``kubectl get csr``, ``get runtimeclass``, ``get
endpointslices`` and ``get apiservices`` show."""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.printers import AGE, NAME, age, human_duration
from platform_api.endpoints.tables import COLUMNS, Column, Printer

Obj = dict[str, Any]

_SIGNER = Column("SignerName", "string", "", "Requested signer for the request.")
_REQUESTOR = Column("Requestor", "string", "", "Base64-encoded PKCS#10 CSR data")
_DURATION = Column(
    "RequestedDuration",
    "string",
    "",
    "expirationSeconds is the requested duration of validity of the issued certificate.",
)
_CONDITION = Column(
    "Condition", "string", "", "Conditions applied to the request, such as approval or denial."
)
_HANDLER = Column("Handler", "string", "", "")
_SLICE = tuple(Column(name, "string", "", "") for name in ("AddressType", "Ports", "Endpoints"))


def csr_condition(csr: Obj) -> str:
    """Denied, else Approved, else Pending; then Failed and Issued when they hold."""
    status = csr.get("status") or {}
    kinds = {c.get("type") for c in status.get("conditions") or []}
    text = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        text += ",Failed"
    if status.get("certificate"):
        text += ",Issued"
    return text


def _csr_cells(obj: Obj) -> list[Any]:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    seconds = spec.get("expirationSeconds")
    return [
        meta.get("name", ""),
        age(meta.get("creationTimestamp")),
        spec.get("signerName") or "<none>",
        spec.get("username", ""),
        "<none>" if seconds is None else human_duration(seconds),
        csr_condition(obj),
    ]


def _runtime_class_cells(obj: Obj) -> list[Any]:
    meta = obj.get("metadata") or {}
    return [meta.get("name", ""), obj.get("handler", ""), age(meta.get("creationTimestamp"))]


COLUMNS[("certificates.platform.io", "certificatesigningrequests")] = Printer(
    (NAME, AGE, _SIGNER, _REQUESTOR, _DURATION, _CONDITION), _csr_cells
)
COLUMNS[("node.platform.io", "runtimeclasses")] = Printer(
    (NAME, _HANDLER, AGE), _runtime_class_cells
)


def _first_three(items: list[str]) -> str:
    """kube's listWithMoreString: three, then how many more."""
    if len(items) > 3:
        return f"{','.join(items[:3])} + {len(items) - 3} more..."
    return ",".join(items) or "<unset>"


def _endpoint_slice_cells(obj: Obj) -> list[Any]:
    meta = obj.get("metadata") or {}
    ports = [
        str(p["port"]) if p.get("port") is not None else (p.get("name") or "*")
        for p in obj.get("ports") or []
    ]
    addresses = [a for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    return [
        meta.get("name", ""),
        obj.get("addressType", ""),
        _first_three(ports),
        _first_three(addresses),
        age(meta.get("creationTimestamp")),
    ]


COLUMNS[("discovery.platform.io", "endpointslices")] = Printer(
    (NAME, *_SLICE, AGE), _endpoint_slice_cells
)


_ENDPOINTS = Column(
    "Endpoints",
    "string",
    "",
    "The set of all endpoints is the union of all subsets. Addresses are placed into subsets "
    "according to the IPs they share. A single address with multiple ports, some of which are "
    "ready and some of which are not (because they come from different containers) will result "
    "in the address being displayed in different subsets for the different ports. No address "
    "will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses "
    "and ports that comprise a service.",
)


def format_endpoints(subsets: list[Obj], most: int = 3) -> str:
    """kube's formatEndpoints: the first three ready ``ip:port`` (or ``ip``), then how many
    more; ``<none>`` without subsets."""
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [a.get("ip", "") for a in subset.get("addresses") or []]
        ports = subset.get("ports") or []
        pairs = (
            [addresses]
            if not ports
            else [[_host_port(ip, p.get("port")) for ip in addresses] for p in ports]
        )
        for entries in pairs:
            count += len(entries)
            shown.extend(entries[: max(0, most - len(shown))])
    text = ",".join(shown)
    return f"{text} + {count - most} more..." if count > most else text


def _host_port(ip: str, port: Any) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def _endpoints_cells(obj: Obj) -> list[Any]:
    meta = obj.get("metadata") or {}
    return [
        meta.get("name", ""),
        format_endpoints(obj.get("subsets") or []),
        age(meta.get("creationTimestamp")),
    ]


COLUMNS[("", "endpoints")] = Printer((NAME, _ENDPOINTS, AGE), _endpoints_cells)


def _apiservice_cells(obj: Obj) -> list[Any]:
    """kube-aggregator's table: the Service (or ``Local``) and the Available condition."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    service = spec.get("service")
    where = f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "Local"
    conditions = (obj.get("status") or {}).get("conditions") or []
    available = next((c for c in conditions if c.get("type") == "Available"), None)
    status = "Unknown"
    if available is not None:
        status = available.get("status", "")
        if status != "True" and available.get("reason"):
            status = f"{status} ({available['reason']})"
    return [meta.get("name", ""), where, status, age(meta.get("creationTimestamp"))]


_SERVICE = Column(
    "Service", "string", "", "The reference to the service that hosts this API endpoint."
)
_AVAILABLE = Column("Available", "string", "", "Whether this service is available.")
COLUMNS[("apiregistration.platform.io", "apiservices")] = Printer(
    (NAME, _SERVICE, _AVAILABLE, AGE), _apiservice_cells
)
