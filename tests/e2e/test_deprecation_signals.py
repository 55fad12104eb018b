"""Feature gates, deprecated APIs and flags, hidden metrics: the real server process."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.test_process import twistd

ENDPOINTS_WARNING = (
    "v1 Endpoints is deprecated in v1.33+; use discovery.platform.io/v1 EndpointSlice"
)


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (
            ("--feature-gates", "WatchList=maybe"),
            'Error: invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": '
            "invalid syntax\n",
        ),
        (
            ("--feature-gates", "ClusterTrustBundleProjection=true"),
            "Error: ClusterTrustBundleProjection is enabled, but depends on features that are "
            "disabled: [ClusterTrustBundle]\n",
        ),
        (("--feature-gates", "wardle:Foo=true"), "Error: component not registered: wardle\n"),
        (
            ("--show-hidden-metrics-for-version", "1.34"),
            'Error: metrics.showHiddenMetricsForVersion: Invalid value: "1.34": must be omitted '
            "or have the value '1.35'; only the previous minor version is allowed\n",
        ),
        (
            ("--apiserver-count=3", "--secure-port", "70000"),
            "Flag --apiserver-count has been deprecated, apiserver-count is deprecated and will "
            "be removed in a future version.\n"
            "Error: --secure-port must be between 0 and 65535, inclusive\n",
        ),
        (
            ("--admission-control=Bogus",),
            "Flag --admission-control has been deprecated, Use --enable-admission-plugins or "
            "--disable-admission-plugins instead. Will be removed in a future version.\n"
            'Error: admission-control plugin "Bogus" is unknown\n',
        ),
        (
            ("--kubelet-port", "x"),
            'Error: invalid argument "x" for "--kubelet-port" flag: strconv.ParseUint: parsing '
            '"x": invalid syntax\n',
        ),
    ],
)
def test_bad_values_stop_the_start(tmp_path: Path, args: tuple[str, ...], stderr: str) -> None:
    result = twistd("--data-dir", str(tmp_path), *args)
    assert result.returncode == 1
    assert result.stderr == stderr


def _metric_lines(session: requests.Session, server: Server, name: str) -> list[str]:
    text = session.get(server.url + "/metrics").text
    return [line for line in text.splitlines() if line.startswith(name)]


def test_endpoints_warning_gauge_and_audit(server: Server, admin: requests.Session) -> None:
    response = admin.get(server.url + "/api/v1/namespaces/default/endpoints")
    assert response.status_code == 200
    assert response.headers["Warning"] == f'299 - "{ENDPOINTS_WARNING}"'
    # (the shared server also saw other tests' deprecated custom resource versions)
    assert _metric_lines(admin, server, 'apiserver_requested_deprecated_apis{group="",') == [
        'apiserver_requested_deprecated_apis{group="",removed_release="",resource="endpoints",'
        'subresource="",version="v1"} 1'
    ]
    configmaps = admin.get(server.url + "/api/v1/namespaces/default/configmaps")
    assert "Warning" not in configmaps.headers


def test_kubectl_prints_the_warning(server: Server) -> None:
    result = server.kubectl("get", "endpoints", "-n", "default")
    assert f"Warning: {ENDPOINTS_WARNING}\n" in result.stderr


@pytest.mark.slow
def test_gates_flags_and_hidden_metrics_at_start(tmp_path: Path) -> None:
    running = start_server(
        tmp_path / "data",
        "--feature-gates=AuthorizeWithSelectors=true,NoSuchGate=true,CBORServingAndStorage=true",
        "--show-hidden-metrics-for-version=1.35",
        "--apiserver-count=2",
    )
    try:
        session = session_for(running, cert=running.admin_cert)
        gauge = _metric_lines(session, running, "kubernetes_feature_enabled{")
        assert 'kubernetes_feature_enabled{name="CBORServingAndStorage",stage="ALPHA"} 1' in gauge
        assert 'kubernetes_feature_enabled{name="AuthorizeWithSelectors",stage=""} 1' in gauge
        assert 'kubernetes_feature_enabled{name="AllAlpha",stage="ALPHA"} 0' in gauge
        assert len(gauge) == 242
        size = _metric_lines(session, running, "apiserver_storage_db_total_size_in_bytes")
        assert len(size) == 1 and 'endpoint="' in size[0]
        assert running.log is not None
        log = running.log.read_text()
        assert "unrecognized feature gate: NoSuchGate" in log
        assert (
            '"Warning: setting GA feature gate. It will be removed in a future release." '
            'featureGate="AuthorizeWithSelectors" value=true'
        ) in log
        assert "Hidden metrics (apiserver_storage_db_total_size_in_bytes) have been manually" in log
    finally:
        running.stop()


def test_hidden_metric_absent_by_default(server: Server, admin: requests.Session) -> None:
    assert _metric_lines(admin, server, "apiserver_storage_db_total_size_in_bytes") == []


REFUSED = (
    'Get "https://127.0.0.1:{port}/healthz": dial tcp 127.0.0.1:{port}: connect: connection refused'
)


def test_componentstatus_get_and_list(server: Server, admin: requests.Session) -> None:
    url = server.url + "/api/v1/componentstatuses"
    etcd = admin.get(url + "/etcd-0")
    assert etcd.status_code == 200
    assert etcd.headers["Warning"] == '299 - "v1 ComponentStatus is deprecated in v1.19+"'
    assert etcd.json() == {
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": "etcd-0"},
        "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
    }
    listed = admin.get(url).json()
    assert listed["kind"] == "ComponentStatusList" and listed["metadata"] == {}
    by_name = {item["metadata"]["name"]: item["conditions"][0] for item in listed["items"]}
    assert set(by_name) == {"scheduler", "controller-manager", "etcd-0"}
    for name, port in (("scheduler", 10259), ("controller-manager", 10257)):
        if by_name[name]["status"] == "False":  # nothing serves the port on this machine
            assert by_name[name]["message"] == REFUSED.format(port=port)
    only = admin.get(url, params={"fieldSelector": "metadata.name=etcd-0"}).json()
    assert [item["metadata"]["name"] for item in only["items"]] == ["etcd-0"]
    missing = admin.get(url + "/nope")
    assert missing.status_code == 404
    assert missing.json()["message"] == 'componentstatus "nope" not found'
    assert missing.json()["details"] == {"name": "nope", "kind": "componentstatus"}
    assert admin.delete(url + "/etcd-0").status_code == 405


def test_kubectl_get_componentstatuses(server: Server) -> None:
    result = server.kubectl("get", "componentstatuses")
    assert "Warning: v1 ComponentStatus is deprecated in v1.19+\n" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert any(line.split()[:3] == ["etcd-0", "Healthy", "ok"] for line in lines[1:])
    assert len(lines) == 4
