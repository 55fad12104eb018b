"""API Priority and Fairness on a real server: default objects, headers, a flood."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import VENV_BIN, Server, session_for, start_server

API = "/apis/flowcontrol.apiserver.platform.io/v1"
# A list at a revision far ahead waits (~3 s) for it: a request that holds its seat.
SLOW = "/api/v1/namespaces/default/configmaps?resourceVersion=99999999&resourceVersionMatch=NotOlderThan"


@pytest.fixture(scope="module")
def apf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("apf")
    tokens = root / "tokens.csv"
    tokens.write_text("t-flood,flooder,u1,\nt-bob,bob,u2,\n")
    # One dispatcher's arithmetic: under --workers each worker has a share of the seats.
    server = start_server(root / "data", "--workers=1", "--token-auth-file", str(tokens))
    yield server
    server.stop()


def _uid(admin: requests.Session, server: Server, kind: str, name: str) -> str:
    r = admin.get(f"{server.url}{API}/{kind}/{name}")
    assert r.status_code == 200, r.text
    return str(r.json()["metadata"]["uid"])


def test_default_objects_listed_by_kubectl(apf: Server) -> None:
    out = subprocess.run(
        [
            str(VENV_BIN / "kubectl"),
            "--kubeconfig",
            str(apf.kubeconfig),
            "get",
            "flowschemas,prioritylevelconfigurations",
            "-o",
            "name",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.split()
    assert "flowschema.flowcontrol.apiserver.platform.io/exempt" in out
    assert "flowschema.flowcontrol.apiserver.platform.io/probes" in out
    assert "flowschema.flowcontrol.apiserver.platform.io/platform-system-service-accounts" in out
    assert "prioritylevelconfiguration.flowcontrol.apiserver.platform.io/workload-low" in out
    assert len(out) == 19  # 11 schemas, 8 levels


def test_a_schema_naming_bad_url_paths_is_refused_in_kubes_words(apf: Server) -> None:
    """As the reference answered: each non-resource URL path is checked, and a mandatory
    schema's spec is shown as kube's internal struct."""
    admin = session_for(apf, cert=apf.admin_cert)
    rule = {
        "subjects": [{"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": ""}}],
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["x", "/a/*/b"]}],
    }
    body = {"metadata": {"name": "urls"}, "spec": {"priorityLevelConfiguration": {"name": "x"}}}
    body["spec"]["rules"] = [rule]
    r = admin.post(f"{apf.url}{API}/flowschemas", json=body)
    assert (r.status_code, r.json()["message"]) == (
        422,
        'FlowSchema.flowcontrol.apiserver.platform.io "urls" is invalid: '
        "[spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify "
        "namespace for service account, spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: "
        'Invalid value: "x": must start with slash, '
        'spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "/a/*/b": '
        "wildcard can only do suffix matching]",
    )
    exempt = admin.get(f"{apf.url}{API}/flowschemas/exempt").json()
    exempt["spec"]["matchingPrecedence"] = 2
    r = admin.put(f"{apf.url}{API}/flowschemas/exempt", json=exempt)
    assert r.status_code == 422 and r.json()["message"].startswith(
        'FlowSchema.flowcontrol.apiserver.platform.io "exempt" is invalid: spec: Invalid value: '
        '{"PriorityLevelConfiguration":{"Name":"exempt"},"MatchingPrecedence":2,'
    )


def test_headers_carry_the_uids(apf: Server) -> None:
    admin = session_for(apf, cert=apf.admin_cert)
    r = admin.get(apf.url + "/api/v1/namespaces")
    assert r.headers["X-Platform-PF-FlowSchema-UID"] == _uid(admin, apf, "flowschemas", "exempt")
    assert r.headers["X-Platform-PF-PriorityLevel-UID"] == _uid(
        admin, apf, "prioritylevelconfigurations", "exempt"
    )
    bob = session_for(apf, token="t-bob")
    r = bob.get(apf.url + "/api/v1/namespaces/default/configmaps")
    assert r.headers["X-Platform-PF-FlowSchema-UID"] == _uid(
        admin, apf, "flowschemas", "global-default"
    )
    probe = session_for(apf).get(apf.url + "/readyz")
    assert probe.headers["X-Platform-PF-FlowSchema-UID"] == _uid(
        admin, apf, "flowschemas", "probes"
    )


def _tiny_level(admin: requests.Session, server: Server) -> None:
    """3 seats (1 share of 246 over 600), one queue of one: for user ``flooder``."""
    level = {
        "apiVersion": "flowcontrol.apiserver.platform.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "tiny"},
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 1,
                "borrowingLimitPercent": 0,
                "limitResponse": {
                    "type": "Queue",
                    "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1},
                },
            },
        },
    }
    schema = {
        "apiVersion": "flowcontrol.apiserver.platform.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": "flooders"},
        "spec": {
            "priorityLevelConfiguration": {"name": "tiny"},
            "matchingPrecedence": 500,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                    "resourceRules": [
                        {
                            "verbs": ["*"],
                            "apiGroups": ["*"],
                            "resources": ["*"],
                            "namespaces": ["*"],
                            "clusterScope": True,
                        }
                    ],
                }
            ],
        },
    }
    assert (
        admin.post(server.url + API + "/prioritylevelconfigurations", json=level).status_code == 201
    )
    assert admin.post(server.url + API + "/flowschemas", json=schema).status_code == 201
    time.sleep(0.5)  # the watch hub delivers, the filter rebuilds


@pytest.mark.slow
def test_flood_gets_429_while_others_are_served(apf: Server) -> None:
    admin = session_for(apf, cert=apf.admin_cert)
    _tiny_level(admin, apf)
    flood = [session_for(apf, token="t-flood") for _ in range(8)]
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(s.get, apf.url + SLOW, timeout=30) for s in flood]
        time.sleep(1.0)  # 3 run, 1 waits, the rest were turned away
        started = time.monotonic()
        assert admin.get(apf.url + "/api/v1/namespaces").status_code == 200
        assert session_for(apf).get(apf.url + "/readyz").status_code == 200
        bob = session_for(apf, token="t-bob").get(apf.url + "/api/v1/namespaces/default/configmaps")
        assert bob.status_code == 200
        assert time.monotonic() - started < 1.0
        answers = [f.result() for f in futures]
    refused = [r for r in answers if r.status_code == 429]
    assert len(refused) == 4, [r.status_code for r in answers]
    r = refused[0]
    assert r.text == "Too many requests, please try again later.\n"
    assert r.headers["Retry-After"] in ("1", "2")
    assert r.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Cache-Control"] == "no-cache, private"  # kube's outer filter's
    assert r.headers["X-Platform-PF-PriorityLevel-UID"] == _uid(
        admin, apf, "prioritylevelconfigurations", "tiny"
    )
    metrics = admin.get(apf.url + "/metrics").text
    assert (
        'apiserver_flowcontrol_rejected_requests_total{flow_schema="flooders",'
        'priority_level="tiny",reason="queue-full"} 4' in metrics
    )
    assert 'apiserver_flowcontrol_nominal_limit_seats{priority_level="tiny"} 3' in metrics
    # kube's fair-queuing internals: the one request that waited was enqueued into a queue
    # of one and dispatched from it; the levels' seats and requests over time
    assert (
        'apiserver_flowcontrol_request_queue_length_after_enqueue_bucket{flow_schema="flooders",'
        'priority_level="tiny",le="10"} 1' in metrics
    )
    for family in ("dispatch_r", "latest_s", "current_r"):
        assert f'apiserver_flowcontrol_{family}{{priority_level="tiny"}} ' in metrics
    for bound in ("max", "min"):
        assert f'_next_s_bounds{{bound="{bound}",priority_level="tiny"}} ' in metrics
        assert f'_next_discounted_s_bounds{{bound="{bound}",priority_level="tiny"}} ' in metrics
    for series in (
        'priority_level_seat_utilization_count{phase="executing",priority_level="tiny"}',
        'priority_level_request_utilization_count{phase="waiting",priority_level="tiny"}',
        'read_vs_write_current_requests_count{phase="executing",request_kind="readOnly"}',
        'read_vs_write_current_requests_count{phase="waiting",request_kind="mutating"}',
        'demand_seats_bucket{priority_level="tiny",le="6"}',
    ):
        assert "\napiserver_flowcontrol_" + series + " " in metrics, series
    assert "\napiserver_flowcontrol_seat_fair_frac 0\n" in metrics  # no period has ended


def test_disabled_means_no_headers(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--enable-priority-and-fairness=false")
    try:
        r = session_for(server, cert=server.admin_cert).get(server.url + "/api/v1/namespaces")
        assert r.status_code == 200
        assert "X-Platform-PF-FlowSchema-UID" not in r.headers
    finally:
        server.stop()
