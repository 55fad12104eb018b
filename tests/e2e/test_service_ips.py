"""ServiceCIDRs, IPAddresses and the cluster IP allocator over them: the requests
kube-apiserver v1.36 answered (tests/registry/fixtures/service_ips_kube.json) answered
alike, and the controllers kube-controller-manager and kube-apiserver run for them."""

from __future__ import annotations

import copy
import ipaddress
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import QUIET_CONTROLLERS, VENV_BIN, Server, session_for, start_server
from tests.e2e.crds import eventually

FIXTURE = Path(__file__).parents[1] / "registry" / "fixtures" / "service_ips_kube.json"
BRAND = (
    ("networking.k8s.io", "networking.platform.io"),
    ("ipaddress.kubernetes.io", "ipaddress.platform.io"),
    ("ipallocator.k8s.io", "ipallocator.platform.io"),
)
G = "/apis/networking.platform.io/v1"
SERVICES = "/api/v1/namespaces/default/services"
Obj = dict[str, Any]


def _branded(text: str) -> str:
    for kube, ours in BRAND:
        text = text.replace(kube, ours)
    return text


KUBE = json.loads(_branded(FIXTURE.read_text()))["cases"]


def _plain(body: Any) -> Any:
    """What two servers cannot share: uids, versions, times, managedFields."""
    if isinstance(body, dict):
        meta = body.get("metadata")
        if isinstance(meta, dict):
            for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
                meta.pop(key, None)
        details = body.get("details")
        if isinstance(details, dict):
            details.pop("uid", None)
        status = body.get("status")
        if isinstance(status, dict):
            for condition in status.get("conditions") or []:
                condition.pop("lastTransitionTime", None)
    return body


def _dynamic(request_body: Any, body: Any) -> Any:
    """A Service's randomly picked address, as the range it was picked from."""
    spec = request_body.get("spec") if isinstance(request_body, dict) else None
    if not isinstance(body, dict) or body.get("kind") != "Service":
        return body
    if isinstance(spec, dict) and spec.get("clusterIP"):
        return body
    ips = body.get("spec", {}).get("clusterIPs") or []
    if ips and ips != ["None"]:
        for ip in ips:
            assert ipaddress.ip_address(ip) in ipaddress.ip_network("10.0.0.0/24")
        body["spec"]["clusterIPs"] = ["<dynamic>"]
        body["spec"]["clusterIP"] = "<dynamic>"
    return body


@pytest.fixture
def cidr_server(tmp_path: Path) -> Iterator[Server]:
    """A server as the reference ran: no service-cidr-controller."""
    server = start_server(tmp_path / "data", QUIET_CONTROLLERS + ",-service-cidr-controller")
    try:
        yield server
    finally:
        server.stop()


def test_requests_answered_as_kube_answered(cidr_server: Server) -> None:
    admin = session_for(cidr_server, cert=cidr_server.admin_cert)
    for case in KUBE:
        method, path, body = case["request"]
        url = cidr_server.url + path.replace("G/", G + "/")
        content = "application/merge-patch+json" if method == "PATCH" else "application/json"
        if case.get("raw"):  # bytes as sent: malformed or wrongly typed
            r = admin.request(method, url, data=body, headers={"Content-Type": content})
            body = _parsed(body)
        else:
            r = admin.request(method, url, json=body, headers={"Content-Type": content})
        got = _dynamic(body, _plain(r.json()))
        want = _dynamic(body, _plain(case["body"]))
        if want.get("kind") == "Service" and got.get("kind") == "Service" and method == "PATCH":
            got["spec"]["clusterIP"] = got["spec"]["clusterIPs"][0] = "<dynamic>"
            want["spec"]["clusterIP"] = want["spec"]["clusterIPs"][0] = "<dynamic>"
        assert (r.status_code, got) == (case["code"], want), (method, path)


def _parsed(raw: str | None) -> Any:
    try:
        return json.loads(raw or "null")
    except ValueError:
        return None


def _cidr(name: str, *cidrs: str) -> Obj:
    return {
        "apiVersion": "networking.platform.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": name},
        "spec": {"cidrs": list(cidrs)},
    }


def _service(name: str, ip: str | None = None, **spec: Any) -> Obj:
    body: Obj = {"ports": [{"port": 80}], **spec}
    if ip:
        body["clusterIP"] = ip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}


def test_the_default_service_cidr_and_the_kubernetes_service_address(
    server: Server, admin: requests.Session
) -> None:
    cidr = admin.get(server.url + G + "/servicecidrs/kubernetes").json()
    assert cidr["spec"] == {"cidrs": ["10.0.0.0/24"]}
    ready = cidr["status"]["conditions"][0]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "True", "")
    assert ready["message"] in (
        "Kubernetes default Service CIDR is ready",
        "Kubernetes Service CIDR is ready",
    )
    address = admin.get(server.url + G + "/ipaddresses/10.0.0.1").json()
    assert address["metadata"]["labels"] == {
        "ipaddress.platform.io/ip-family": "IPv4",
        "ipaddress.platform.io/managed-by": "ipallocator.platform.io",
    }
    ref = {"resource": "services", "namespace": "default", "name": "kubernetes"}
    assert address["spec"] == {"parentRef": ref}


def test_a_refused_service_gives_its_address_back(server: Server, admin: requests.Session) -> None:
    # Addresses of the static subrange: other tests' random ones come from above it.
    ok = admin.post(server.url + SERVICES, json=_service("ga-one", "10.0.0.11"))
    assert ok.status_code == 201
    # the same name again, another address: refused after that address was written
    r = admin.post(server.url + SERVICES, json=_service("ga-one", "10.0.0.12"))
    assert r.status_code == 409 and r.json()["reason"] == "AlreadyExists"
    gone = admin.get(server.url + G + "/ipaddresses/10.0.0.12")
    assert gone.status_code == 404 and gone.json()["reason"] == "NotFound"
    # a bad port, after an address was picked: refused, and the address is free again
    before = {
        i["metadata"]["name"] for i in admin.get(server.url + G + "/ipaddresses").json()["items"]
    }
    bad = _service("ga-bad")
    bad["spec"]["ports"] = [{"port": 0}]
    r = admin.post(server.url + SERVICES, json=bad)
    assert r.status_code == 422 and r.json()["reason"] == "Invalid"
    after = {
        i["metadata"]["name"] for i in admin.get(server.url + G + "/ipaddresses").json()["items"]
    }
    assert after == before
    assert admin.delete(server.url + SERVICES + "/ga-one").status_code == 200
    assert admin.get(server.url + G + "/ipaddresses/10.0.0.11").status_code == 404
    again = admin.post(server.url + SERVICES, json=_service("ga-two", "10.0.0.11"))
    assert again.status_code == 201


def test_a_headless_service_takes_no_node_port_or_load_balancer(
    server: Server, admin: requests.Session
) -> None:
    """As kube-apiserver v1.36 answered: a NodePort or LoadBalancer needs an address,
    so ``clusterIP: None`` is refused for them, created so or turned so."""
    for kind in ("NodePort", "LoadBalancer"):
        body = _service(f"hl-{kind.lower()}", "None", type=kind)
        r = admin.post(server.url + SERVICES, json=body)
        assert (r.status_code, r.json()["message"]) == (
            422,
            f'Service "hl-{kind.lower()}" is invalid: spec.clusterIPs[0]: Invalid value: '
            f"\"None\": may not be set to 'None' for {kind} services",
        )
    assert admin.post(server.url + SERVICES, json=_service("hl-plain", "None")).status_code == 201
    merge = {"Content-Type": "application/merge-patch+json"}
    turned = {"spec": {"type": "NodePort"}}
    r = admin.patch(server.url + SERVICES + "/hl-plain", json=turned, headers=merge)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Service "hl-plain" is invalid: spec.clusterIPs[0]: Invalid value: "None": '
        "may not be set to 'None' for NodePort services",
    )
    assert admin.get(server.url + SERVICES + "/hl-plain").json()["spec"]["type"] == "ClusterIP"


def test_updates_keep_and_turn_addresses(server: Server, admin: requests.Session) -> None:
    created = admin.post(server.url + SERVICES, json=_service("up-one", selector={"a": "b"}))
    ip = created.json()["spec"]["clusterIP"]
    # a re-applied manifest without the address keeps it
    replaced = admin.put(
        server.url + SERVICES + "/up-one", json=_service("up-one", selector={"a": "c"})
    )
    assert replaced.status_code == 200 and replaced.json()["spec"]["clusterIPs"] == [ip]
    merge = {"Content-Type": "application/merge-patch+json"}
    # Another address than its own (the session's server may have handed out .99 to it).
    other = "10.0.0.98" if ip == "10.0.0.99" else "10.0.0.99"
    moved = admin.patch(
        server.url + SERVICES + "/up-one", json={"spec": {"clusterIP": other}}, headers=merge
    )
    assert moved.status_code == 422
    assert moved.json()["message"] == (
        f'Service "up-one" is invalid: spec.clusterIPs[0]: Invalid value: ["{other}"]: '
        "may not change once set"
    )
    # ExternalName frees the address (the repair loop deletes its IPAddress)
    external = {"spec": {"type": "ExternalName", "externalName": "x.example.com"}}
    turned = admin.patch(server.url + SERVICES + "/up-one", json=external, headers=merge)
    assert turned.status_code == 200
    spec = turned.json()["spec"]
    assert "clusterIP" not in spec and "ipFamilies" not in spec and "ipFamilyPolicy" not in spec
    eventually(lambda: admin.get(server.url + G + f"/ipaddresses/{ip}").status_code == 404)
    # and back: a new address
    back = {"spec": {"type": "ClusterIP", "externalName": None}}
    turned = admin.patch(server.url + SERVICES + "/up-one", json=back, headers=merge)
    assert turned.status_code == 200
    new_ip = turned.json()["spec"]["clusterIP"]
    held = admin.get(server.url + G + f"/ipaddresses/{new_ip}").json()
    assert held["spec"]["parentRef"]["name"] == "up-one"


def test_a_load_balancer_turned_cluster_ip_drops_what_only_it_had(
    server: Server, admin: requests.Session
) -> None:
    """A read LoadBalancer sent back as ClusterIP (kube v1.36's answers): the fields it
    kept unchanged go, one it changed is refused; a class is fixed once set."""
    url = server.url + SERVICES
    body = {
        "metadata": {"name": "lb-turn"},
        "spec": {"type": "LoadBalancer", "loadBalancerClass": "x.io/lb", "ports": [{"port": 80}]},
    }
    created = admin.post(url, json=body).json()
    spec = created["spec"]
    assert (spec["allocateLoadBalancerNodePorts"], spec["externalTrafficPolicy"]) == (
        True,
        "Cluster",
    )
    moved = copy.deepcopy(created)
    moved["spec"]["loadBalancerClass"] = "y.io/lb"
    r = admin.put(url + "/lb-turn", json=moved)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Service "lb-turn" is invalid: spec.loadBalancerClass: Invalid value: "y.io/lb": '
        "may not change once set",
    )
    turned = copy.deepcopy(created)
    turned["spec"]["type"] = "ClusterIP"
    turned["spec"]["allocateLoadBalancerNodePorts"] = False
    r = admin.put(url + "/lb-turn", json=turned)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'Service "lb-turn" is invalid: spec.allocateLoadBalancerNodePorts: Forbidden: '
        "may only be used when `type` is 'LoadBalancer'",
    )
    turned["spec"]["allocateLoadBalancerNodePorts"] = True
    r = admin.put(url + "/lb-turn", json=turned)
    assert r.status_code == 200, r.text
    spec = r.json()["spec"]
    gone = ("allocateLoadBalancerNodePorts", "loadBalancerClass", "externalTrafficPolicy")
    assert [k for k in gone if k in spec] == [] and "nodePort" not in spec["ports"][0]


def test_a_load_balancer_that_stops_allocating_keeps_its_node_ports(
    server: Server, admin: requests.Session
) -> None:
    """As kube v1.36 answered: ``allocateLoadBalancerNodePorts: false`` releases no node
    port by itself; a body that removes them does, and gets none back."""
    url = server.url + SERVICES
    body = {
        "metadata": {"name": "lb-stop"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
    }
    created = admin.post(url, json=body).json()
    port = created["spec"]["ports"][0]["nodePort"]
    merge = {"Content-Type": "application/merge-patch+json"}
    off = {"spec": {"allocateLoadBalancerNodePorts": False}}
    r = admin.patch(url + "/lb-stop", json=off, headers=merge)
    assert (r.status_code, r.json()["spec"]["ports"][0]["nodePort"]) == (200, port)
    removed = r.json()
    del removed["spec"]["ports"][0]["nodePort"]
    r = admin.put(url + "/lb-stop", json=removed)
    assert r.status_code == 200 and "nodePort" not in r.json()["spec"]["ports"][0]


def test_a_user_service_cidr_is_used_and_protected(server: Server, admin: requests.Session) -> None:
    assert (
        admin.post(server.url + G + "/servicecidrs", json=_cidr("extra", "10.7.0.0/28")).status_code
        == 201
    )

    def ready() -> bool:
        cidr = admin.get(server.url + G + "/servicecidrs/extra").json()
        conditions = cidr.get("status", {}).get("conditions") or []
        return cidr["metadata"].get("finalizers") == [
            "networking.platform.io/service-cidr-finalizer"
        ] and [(c["status"], c["message"]) for c in conditions] == [
            ("True", "Kubernetes Service CIDR is ready")
        ]

    eventually(ready)
    inside = admin.post(server.url + SERVICES, json=_service("in-extra", "10.7.0.5"))
    assert inside.status_code == 201
    assert admin.delete(server.url + G + "/servicecidrs/extra").status_code == 200

    def blocked() -> bool:
        cidr = admin.get(server.url + G + "/servicecidrs/extra").json()
        conditions = cidr.get("status", {}).get("conditions") or []
        return [(c["status"], c["reason"]) for c in conditions] == [("False", "Terminating")]

    eventually(blocked)
    refused = admin.post(server.url + SERVICES, json=_service("in-extra-2", "10.7.0.6"))
    assert refused.status_code == 422
    assert "the provided network does not match the current range" in refused.json()["message"]
    assert admin.delete(server.url + SERVICES + "/in-extra").status_code == 200
    start = time.monotonic()
    eventually(
        lambda: admin.get(server.url + G + "/servicecidrs/extra").status_code == 404, timeout=20
    )
    assert time.monotonic() - start < 15


def test_a_missing_address_is_made_again(server: Server, admin: requests.Session) -> None:
    svc = admin.post(server.url + SERVICES, json=_service("rp-one")).json()
    ip = svc["spec"]["clusterIP"]
    assert admin.delete(server.url + G + f"/ipaddresses/{ip}").status_code == 200
    eventually(lambda: admin.get(server.url + G + f"/ipaddresses/{ip}").status_code == 200)


def test_kubectl_lists_and_makes_them(server: Server, tmp_path: Path) -> None:
    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        command = [str(VENV_BIN / "kubectl"), "--kubeconfig", str(server.kubeconfig), *args]
        return subprocess.run(command, check=False, capture_output=True, text=True)

    manifest = tmp_path / "cidr.yaml"
    manifest.write_text(
        "apiVersion: networking.platform.io/v1\nkind: ServiceCIDR\n"
        "metadata: {name: kubectl-extra}\nspec: {cidrs: [10.66.0.0/24]}\n"
    )
    made = kubectl("create", "-f", str(manifest))
    assert made.returncode == 0, made.stderr
    assert made.stdout == "servicecidr.networking.platform.io/kubectl-extra created\n"
    listed = kubectl("get", "servicecidrs", "kubectl-extra", "--no-headers")
    assert listed.stdout.split()[:2] == ["kubectl-extra", "10.66.0.0/24"]
    assert kubectl("get", "ipaddresses", "10.0.0.1").stdout.splitlines() == [
        "NAME       PARENTREF",
        "10.0.0.1   services/default/kubernetes",
    ]
    gone = kubectl("delete", "servicecidr", "kubectl-extra", "--wait=false")
    assert gone.stdout == 'servicecidr.networking.platform.io "kubectl-extra" deleted\n'
    bad = kubectl("get", "ipaddresses", "10.0.0.")
    assert bad.returncode == 1
    assert bad.stderr == (
        'Error from server (NotFound): ipaddresses.networking.platform.io "10.0.0." not found\n'
    )


def test_an_address_whose_record_is_refused_fails_the_service_as_kube_says(
    server: Server, admin: requests.Session
) -> None:
    """A Service without a name: kube allocates before validating, its IPAddress (whose
    parentRef.name is the Service's) is refused, and the allocator reports that as the
    Service's own clusterIPs error."""
    path = server.url + "/api/v1/namespaces/default/services"
    r = admin.post(
        path, json={"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}]}}
    )
    assert r.status_code == 422
    body = r.json()
    [cause] = body["details"]["causes"]
    assert cause["field"] == "spec.clusterIPs" and cause["reason"] == "FieldValueInvalid"
    address = cause["message"].split('"')[3]
    detail = (
        f'failed to allocate IP: IPAddress.networking.platform.io "{address}" is invalid: '
        "spec.parentRef.name: Required value"
    )
    assert cause["message"] == f'Invalid value: [""]: {detail}'
    assert (
        body["message"] == f'Service "" is invalid: spec.clusterIPs: Invalid value: [""]: {detail}'
    )
    assert (
        admin.get(server.url + f"/apis/networking.platform.io/v1/ipaddresses/{address}").status_code
        == 404
    )


def test_a_generated_name_is_filled_in_before_the_address_is_recorded(
    server: Server, admin: requests.Session
) -> None:
    """kube's store fills in a generated name before it allocates (BeginCreate), so the
    IPAddress names its Service; ours allocated first, for a nameless owner, and failed.
    RelaxedServiceNameValidation (on in v1.36): the name may begin with a digit."""
    path = server.url + "/api/v1/namespaces/default/services"
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "9-"}}
    body["spec"] = {"ports": [{"port": 80}]}
    r = admin.post(path, json=body)
    assert r.status_code == 201, r.text
    name, ip = r.json()["metadata"]["name"], r.json()["spec"]["clusterIP"]
    assert name.startswith("9-") and len(name) == 7
    record = admin.get(server.url + f"/apis/networking.platform.io/v1/ipaddresses/{ip}").json()
    assert record["spec"]["parentRef"]["name"] == name
    assert admin.delete(f"{path}/{name}").status_code == 200


def test_a_kubeadm_command_line_starts_and_its_node_port_range_holds(tmp_path: Path) -> None:
    """kubeadm's kube-apiserver flags for parts this server lacks (kubelets, the watch
    cache's sizes, Go's profiler) are taken; --service-node-port-range,
    --kubernetes-service-node-port and --min-request-timeout act."""
    server = start_server(
        tmp_path / "data",
        "--allow-privileged=true",
        "--kubelet-client-certificate=/etc/kubernetes/pki/apiserver-kubelet-client.crt",
        "--kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key",
        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
        "--profiling=false",
        "--watch-cache-sizes=pods#1000",
        "--v=2",
        "--service-node-port-range=30100-30109",
        "--kubernetes-service-node-port=30105",
        "--emulated-version=kube=1.36",
        "--min-compatibility-version=1.35",
        "--min-request-timeout=1",
    )
    try:
        admin = session_for(server, cert=server.admin_cert)
        url = server.url + "/api/v1/namespaces/default/services"
        spec = admin.get(url + "/kubernetes").json()["spec"]  # as kube 1.36 makes it
        assert (spec["type"], spec["externalTrafficPolicy"]) == ("NodePort", "Cluster")
        assert spec["ports"] == [
            {
                "name": "https",
                "protocol": "TCP",
                "port": 443,
                "targetPort": int(server.url.rsplit(":", 1)[1]),
                "nodePort": 30105,
            }
        ]

        def node_port(name: str, port: int | None = None) -> requests.Response:
            ports = [{"port": 80, **({"nodePort": port} if port else {})}]
            spec = {"type": "NodePort", "ports": ports}
            return admin.post(url, json={"metadata": {"name": name}, "spec": spec})

        r = node_port("picked")
        assert r.status_code == 201, r.text
        picked = r.json()["spec"]["ports"][0]["nodePort"]
        assert 30100 <= picked <= 30109
        assert node_port("named", 30109 if picked != 30109 else 30100).status_code == 201
        r = node_port("taken", 30105)
        assert (r.status_code, r.json()["message"]) == (
            422,
            'Service "taken" is invalid: spec.ports[0].nodePort: Invalid value: 30105: '
            "provided port is already allocated",
        )
        r = node_port("outside", 30110)
        why = "provided port is not in the valid range. The range of valid ports is 30100-30109"
        assert (r.status_code, r.json()["message"]) == (
            422,
            f'Service "outside" is invalid: spec.ports[0].nodePort: Invalid value: 30110: {why}',
        )
        started = time.monotonic()  # a watch ends within [1, 2) s, as kube's [min, 2 min)
        with admin.get(url, params={"watch": "1"}, stream=True) as watch:
            list(watch.iter_lines())
        assert time.monotonic() - started < 10
    finally:
        server.stop()
