"""Table columns of Services and of networking.platform.io's Ingresses, IngressClasses and
NetworkPolicies (kube's printService, printIngress, printIngressClass and
printNetworkPolicy): what ``kubectl get svc,ingress,ingressclass,netpol`` shows."""

from __future__ import annotations

from typing import Any

from platform_api.admission.defaultingressclass import DEFAULT_ANNOTATION
from platform_api.endpoints.printers import (
    AGE,
    NAME,
    column,
    created,
    format_labels,
    format_selector,
    meta,
    register,
)
from platform_api.endpoints.tables import COLUMNS, Printer

Obj = dict[str, Any]
GROUP = "networking.platform.io"
_SERVICE_DOCS = "https://kubernetes.io/docs/concepts/services-networking/service/"
_VIRTUAL_IPS = f"More info: {_SERVICE_DOCS}#virtual-ips-and-service-proxies"
_MORE_HOSTS = 3


def _load_balancer_addresses(status: Obj | None) -> list[str]:
    """kube's loadBalancerStatusStringer (wide): each ingress point's IP, else its hostname,
    sorted and without repeats."""
    ingress = ((status or {}).get("loadBalancer") or {}).get("ingress") or []
    return sorted({i.get("ip") or i.get("hostname") for i in ingress} - {None, ""})


def _external_ip(spec: Obj, status: Obj) -> str:
    """kube's getServiceExternalIP."""
    kind, external = spec.get("type"), spec.get("externalIPs") or []
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        return ",".join(_load_balancer_addresses(status) + external) or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _ports(spec: Obj) -> str:
    shown = []
    for port in spec.get("ports") or []:
        node_port = f":{port['nodePort']}" if port.get("nodePort") else ""
        shown.append(f"{port.get('port')}{node_port}/{port.get('protocol', '')}")
    return ",".join(shown) or "<none>"


def _service_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    cluster_ips = spec.get("clusterIPs") or []
    return [
        spec.get("type", ""),
        cluster_ips[0] if cluster_ips else "<none>",
        _external_ip(spec, status),
        _ports(spec),
        created(obj),
        format_labels(spec.get("selector")),
    ]


register(
    "",
    "services",
    (
        column(
            "Type",
            "type determines how the Service is exposed. Defaults to ClusterIP. Valid options "
            'are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a '
            "cluster-internal IP address for load-balancing to endpoints. Endpoints are "
            "determined by the selector or if that is not specified, by manual construction of "
            'an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual '
            "IP is allocated and the endpoints are published as a set of endpoints rather than "
            'a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node '
            'which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on '
            "NodePort and creates an external load-balancer (if supported in the current cloud) "
            'which routes to the same endpoints as the clusterIP. "ExternalName" aliases this '
            "service to the specified externalName. Several other fields do not apply to "
            f"ExternalName services. More info: {_SERVICE_DOCS}#publishing-services-service-types",
        ),
        column(
            "Cluster-IP",
            "clusterIP is the IP address of the service and is usually assigned randomly. If an "
            "address is specified manually, is in-range (as per system configuration), and is "
            "not in use, it will be allocated to the service; otherwise creation of the service "
            "will fail. This field may not be changed through updates unless the type field is "
            "also being changed to ExternalName (which requires this field to be blank) or the "
            "type field is being changed from ExternalName (in which case this field may "
            'optionally be specified, as describe above).  Valid values are "None", empty '
            'string (""), or a valid IP address. Setting this to "None" makes a "headless '
            'service" (no virtual IP), which is useful when direct endpoint connections are '
            "preferred and proxying is not required.  Only applies to types ClusterIP, "
            "NodePort, and LoadBalancer. If this field is specified when creating a Service of "
            "type ExternalName, creation will fail. This field will be wiped when updating a "
            f"Service to type ExternalName. {_VIRTUAL_IPS}",
        ),
        column(
            "External-IP",
            "externalIPs is a list of IP addresses for which nodes in the cluster will also "
            "accept traffic for this service.  These IPs are not managed by Kubernetes.  The "
            "user is responsible for ensuring that traffic arrives at a node with this IP.  A "
            "common example is external load-balancers that are not part of the Kubernetes "
            "system.",
        ),
        column("Port(s)", f"The list of ports that are exposed by this service. {_VIRTUAL_IPS}"),
        AGE,
        column(
            "Selector",
            "Route service traffic to pods with label keys and values matching this selector. "
            "If empty or not present, the service is assumed to have an external process "
            "managing its endpoints, which Kubernetes will not modify. Only applies to types "
            "ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: "
            f"{_SERVICE_DOCS}",
            priority=1,
        ),
    ),
    _service_cells,
)


def _ingress_hosts(rules: list[Obj]) -> str:
    """kube's formatHosts: the first three hosts, then how many rules more; ``*`` when no
    rule names a host."""
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == _MORE_HOSTS
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    shown = ",".join(hosts)
    return f"{shown} + {len(rules) - _MORE_HOSTS} more..." if more else shown


def _ingress_cells(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    return [
        spec.get("ingressClassName") or "<none>",
        _ingress_hosts(spec.get("rules") or []),
        ",".join(_load_balancer_addresses(obj.get("status"))),
        "80, 443" if spec.get("tls") else "80",
        created(obj),
    ]


register(
    GROUP,
    "ingresses",
    (
        column(
            "Class",
            "The name of the IngressClass resource that should be used for additional "
            "configuration",
        ),
        column("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
        column("Address", "Address is a list containing ingress points for the load-balancer"),
        column("Ports", "Ports of TLS configurations that open"),
        AGE,
    ),
    _ingress_cells,
)


def _ingress_class_cells(obj: Obj) -> list[Any]:
    """The name (`` (default)`` after the default class's), the controller and the
    parameters' ``Kind[.apiGroup]/name``."""
    name = meta(obj).get("name", "")
    if (meta(obj).get("annotations") or {}).get(DEFAULT_ANNOTATION) == "true":
        name += " (default)"
    spec = obj.get("spec") or {}
    parameters = spec.get("parameters")
    shown = "<none>"
    if parameters is not None:
        group = parameters.get("apiGroup")
        kind = parameters.get("kind", "") + (f".{group}" if group is not None else "")
        shown = f"{kind}/{parameters.get('name', '')}"
    return [name, spec.get("controller", ""), shown, created(obj)]


COLUMNS[(GROUP, "ingressclasses")] = Printer(
    (
        NAME,
        column("Controller", "Controller that is responsible for handling this class"),
        column("Parameters", "A reference to a resource with additional parameters"),
        AGE,
    ),
    _ingress_class_cells,
)
register(
    GROUP,
    "networkpolicies",
    (
        column(
            "Pod-Selector",
            "podSelector selects the pods to which this NetworkPolicy object applies. The array "
            "of rules is applied to any pods selected by this field. An empty selector matches "
            "all pods in the policy's namespace. Multiple network policies can select the same "
            "set of pods. In this case, the ingress rules for each are combined additively. "
            "This field is optional. If it is not specified, it defaults to an empty selector.",
        ),
        AGE,
    ),
    lambda o: [format_selector((o.get("spec") or {}).get("podSelector")), created(o)],
)
