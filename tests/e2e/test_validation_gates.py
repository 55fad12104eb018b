"""Feature gates that change what a pod spec may hold (kube v1.36's alpha
TaintTolerationComparisonOperators and UserNamespacesHostNetworkSupport): on, they
let tolerations compare numbers and a pod in its own user namespace use the host's
network; turned off again, objects written meanwhile stay updatable and new ones are
refused.  Every answer as the reference kube-apiserver gave it with the same gates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.conftest import ON_LMDB, session_for, start_server

GATES = (
    "--feature-gates=TaintTolerationComparisonOperators=true,"
    "UserNamespacesHostNetworkSupport=true,NodeDeclaredFeatures=true"
)
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _deployment(name: str, value: str) -> dict[str, Any]:
    spec = {
        "containers": [{"name": "c", "image": "i"}],
        "tolerations": [{"key": "k", "operator": "Lt", "value": value}],
        "hostUsers": False,
        "hostNetwork": True,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec},
        },
    }


def test_gates_on_then_off(tmp_path: Path) -> None:
    data = tmp_path / "data"  # LMDB: the second server reads what the first wrote
    server = start_server(data, ON_LMDB, GATES)
    try:
        admin = session_for(server, cert=server.admin_cert)
        assert admin.post(server.url + DEPLOYMENTS, json=_deployment("d", "10")).status_code == 201
        r = admin.post(server.url + DEPLOYMENTS, json=_deployment("bad", "x"))
        assert r.status_code == 422
        at = "spec.template.spec.tolerations[0].value"
        assert r.json()["message"] == (
            f'Deployment.apps "bad" is invalid: [{at}: Invalid value: "x": must be a valid '
            f'decimal integer in canonical form, {at}: Invalid value: "x": strconv.ParseInt: '
            'parsing "x": invalid syntax]'
        )
        runtime = {
            "apiVersion": "node.platform.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "rc"},
            "handler": "h",
            "scheduling": {"tolerations": [{"key": "k", "operator": "Lt", "value": "5"}]},
        }
        r = admin.post(server.url + "/apis/node.platform.io/v1/runtimeclasses", json=runtime)
        assert (r.status_code, r.json()["message"]) == (
            422,
            'RuntimeClass.node.platform.io "rc" is invalid: scheduling.tolerations[0].operator: '
            'Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"',
        )
    finally:
        server.stop()
    server = start_server(data, ON_LMDB)
    try:
        admin = session_for(server, cert=server.admin_cert)
        patch = {"metadata": {"labels": {"touched": "yes"}}}
        r = admin.patch(
            server.url + DEPLOYMENTS + "/d",
            json=patch,
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert r.status_code == 200 and r.json()["metadata"]["labels"] == {"touched": "yes"}
        r = admin.post(server.url + DEPLOYMENTS, json=_deployment("new", "10"))
        assert (r.status_code, r.json()["message"]) == (
            422,
            'Deployment.apps "new" is invalid: [spec.template.spec.hostNetwork: Forbidden: when '
            "`hostUsers` is false, spec.template.spec.tolerations[0].operator: Unsupported "
            'value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"]',
        )
    finally:
        server.stop()
