"""kube's per-plugin admission latency family, as kube-apiserver v1.36 fills it: after a
create, an update, a delete and an exec, the series of exactly the plugins kube asks
(read off the reference build's /metrics after the same requests)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server

FAMILY = "apiserver_admission_controller_admission_duration_seconds_count"
SERIES = re.compile(
    FAMILY + r'\{name="(\w+)",operation="(\w+)",rejected="(\w+)",type="(\w+)"\} (\S+)'
)
# kube-apiserver v1.36 with its default plugins: (operation, type) -> plugins asked.
KUBE = {
    ("CREATE", "admit"): "DefaultIngressClass DefaultStorageClass DefaultTolerationSeconds "
    "LimitRanger MutatingAdmissionPolicy MutatingAdmissionWebhook NamespaceLifecycle "
    "PodGroupProtection PodTopologyLabels Priority RuntimeClass ServiceAccount "
    "StorageObjectInUseProtection TaintNodesByCondition",
    ("CREATE", "validate"): "CertificateSubjectRestriction ClusterTrustBundleAttest LimitRanger "
    "PodGroupWorkloadExists PodSecurity Priority ResourceQuota RuntimeClass ServiceAccount "
    "ValidatingAdmissionPolicy ValidatingAdmissionWebhook",
    ("UPDATE", "admit"): "DefaultTolerationSeconds LimitRanger MutatingAdmissionPolicy "
    "MutatingAdmissionWebhook NamespaceLifecycle Priority ServiceAccount",
    ("UPDATE", "validate"): "CertificateApproval CertificateSigning ClusterTrustBundleAttest "
    "JobValidation LimitRanger NodeDeclaredFeatureValidator PersistentVolumeClaimResize "
    "PodResizeValidator PodSecurity Priority ResourceQuota ServiceAccount "
    "ValidatingAdmissionPolicy ValidatingAdmissionWebhook",
    ("DELETE", "admit"): "MutatingAdmissionWebhook NamespaceLifecycle Priority",
    ("DELETE", "validate"): "Priority ValidatingAdmissionPolicy ValidatingAdmissionWebhook",
    ("CONNECT", "admit"): "MutatingAdmissionPolicy MutatingAdmissionWebhook",
    ("CONNECT", "validate"): "ValidatingAdmissionPolicy ValidatingAdmissionWebhook",
}


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("admission-metrics"))
    yield running
    running.stop()


def observed(admin: requests.Session, server: Server) -> dict[tuple[str, ...], float]:
    text = admin.get(server.url + "/metrics").text
    return {m.groups()[:4]: float(m.group(5)) for m in SERIES.finditer(text)}


def test_each_plugin_kube_asks_is_observed(own: Server) -> None:
    admin = session_for(own, cert=own.admin_cert)
    assert admin.delete(own.url + "/metrics").status_code == 200  # kube's reset
    cms = own.url + "/api/v1/namespaces/default/configmaps"
    assert admin.post(cms, json={"metadata": {"name": "m"}}).status_code == 201
    patch = {"metadata": {"labels": {"a": "b"}}}
    merge = {"Content-Type": "application/merge-patch+json"}
    assert admin.patch(cms + "/m", json=patch, headers=merge).status_code == 200
    assert admin.delete(cms + "/m").status_code == 200
    assert admin.post(own.url + "/api/v1/namespaces/default/pods/none/exec").status_code == 404
    seen = observed(admin, own)
    asked = {
        (op, kind): sorted(n for n, o, _, k in seen if (o, k) == (op, kind)) for op, kind in KUBE
    }
    assert asked == {key: sorted(names.split()) for key, names in KUBE.items()}
    assert {rejected for _, _, rejected, _ in seen} == {"false"}
    # A create refused by NamespaceLifecycle: it is observed as rejected, no plugin after it.
    before = observed(admin, own)
    refused = admin.post(
        own.url + "/api/v1/namespaces/nope/configmaps", json={"metadata": {"name": "m"}}
    )
    assert refused.status_code == 404
    after = observed(admin, own)
    grown = {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key)}
    assert grown == {("NamespaceLifecycle", "CREATE", "true", "admit"): 1}


def test_a_reset_starts_the_family_over(tmp_path: Path) -> None:
    """(Series are made when first observed, so a reset leaves none behind.)"""
    server = start_server(tmp_path / "data")
    try:
        admin = session_for(server, cert=server.admin_cert)
        cms = server.url + "/api/v1/namespaces/default/configmaps"
        assert admin.post(cms, json={"metadata": {"name": "m"}}).status_code == 201
        assert observed(admin, server)
        assert admin.delete(server.url + "/metrics").status_code == 200
        assert observed(admin, server) == {}
    finally:
        server.stop()
