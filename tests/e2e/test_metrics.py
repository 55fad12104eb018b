"""/metrics of the real server: kube's families and label sets, checked by Prometheus' promtool."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
import time

import pytest
import requests
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from tests.e2e.conftest import E2E_ETCD, E2E_WORKERS, Server

CM = "/api/v1/namespaces/default/configmaps"
OPENMETRICS = "application/openmetrics-text;version=1.0.0"
# promtool's lints that kube-apiserver's own /metrics has too: these counters' kube names
# lack the suffix (k8s.io/apiserver/pkg/endpoints/filters/metrics.go).
KUBE_LINTS = {
    'authenticated_user_requests counter metrics should have "_total" suffix',
    'authentication_attempts counter metrics should have "_total" suffix',
    'apiserver_admission_webhook_rejection_count counter metrics should have "_total" suffix',
    "apiserver_admission_webhook_rejection_count non-histogram and non-summary metrics should "
    'not have "_count" suffix',
    # kube's token cache gauge (k8s.io/apiserver/pkg/authentication/token/cache/stats.go)
    "authentication_token_cache_active_fetch_count non-histogram and non-summary metrics "
    'should not have "_count" suffix',
}
DASHBOARD_FAMILIES = (
    "apiserver_request_total",
    "apiserver_request_duration_seconds_bucket",
    "apiserver_request_sli_duration_seconds_bucket",
    "apiserver_current_inflight_requests",
    "process_resident_memory_bytes",
    "process_cpu_seconds_total",
    "apiserver_storage_objects",
    "etcd_request_duration_seconds_bucket",
    "apiserver_response_sizes_bucket",
    "kubernetes_build_info",
    "kubernetes_feature_enabled",
    "authentication_attempts",
    "authorization_attempts_total",
)


def scrape(admin: requests.Session, server: Server) -> dict[str, str]:
    """Every sample line of a text-format scrape: series -> value."""
    r = admin.get(server.url + "/metrics")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for line in r.text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            samples[series] = value
    return samples


def delta(before: dict[str, str], after: dict[str, str], series: str) -> float:
    return float(after.get(series, "0")) - float(before.get(series, "0"))


def request_series(verb: str, scope: str, code: str, dry_run: str = "") -> str:
    return (
        f'apiserver_request_total{{code="{code}",component="apiserver",dry_run="{dry_run}",'
        f'group="",resource="configmaps",scope="{scope}",subresource="",system_client="",'
        f'verb="{verb}",version="v1"}}'
    )


def test_request_total_counts_kube_verbs_and_scopes(
    server: Server, admin: requests.Session
) -> None:
    before = scrape(admin, server)
    assert admin.get(server.url + CM).status_code == 200
    assert admin.get(server.url + "/api/v1/configmaps").status_code == 200
    assert admin.get(server.url + CM + "/metrics-absent").status_code == 404
    body = {"metadata": {"name": "metrics-dry"}}
    assert admin.post(server.url + CM + "?dryRun=All", json=body).status_code == 201
    apply = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"metrics-apply"}}'
    r = admin.patch(
        server.url + CM + "/metrics-apply?fieldManager=test",
        data=apply,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert r.status_code == 201
    assert admin.get(server.url + CM + "?watch=true&timeoutSeconds=1").status_code == 200
    after = scrape(admin, server)
    assert delta(before, after, request_series("LIST", "namespace", "200")) == 1
    assert delta(before, after, request_series("LIST", "cluster", "200")) == 1
    assert delta(before, after, request_series("GET", "resource", "404")) == 1
    assert delta(before, after, request_series("POST", "resource", "201", "All")) == 1
    assert delta(before, after, request_series("APPLY", "resource", "201")) == 1
    assert delta(before, after, request_series("WATCH", "namespace", "200")) == 1
    watch_events = 'apiserver_watch_events_total{group="",resource="configmaps",version="v1"}'
    assert delta(before, after, watch_events) >= 1  # the applied ConfigMap's ADDED at least
    latency = (
        'apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",'
        'resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"}'
    )
    assert delta(before, after, latency) == 1
    size = (
        'apiserver_response_sizes_count{component="apiserver",group="",resource="configmaps",'
        'scope="namespace",subresource="",verb="LIST",version="v1"}'
    )
    assert delta(before, after, size) == 1

    # the SLO dashboards' latency: real requests only, a dry run is not in it
    def sli(verb: str) -> str:
        return (
            'apiserver_request_sli_duration_seconds_count{component="apiserver",group="",'
            f'resource="configmaps",scope="resource",subresource="",verb="{verb}",version="v1"}}'
        )

    assert (delta(before, after, sli("APPLY")), delta(before, after, sli("POST"))) == (1, 0)
    assert delta(before, after, 'authorization_attempts_total{result="allowed"}') >= 6
    assert delta(before, after, 'authentication_attempts{result="success"}') >= 6


def test_open_watch_is_longrunning(server: Server, admin: requests.Session) -> None:
    series = (
        'apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",'
        'scope="namespace",subresource="",verb="WATCH",version="v1"}'
    )
    base = float(scrape(admin, server).get(series, "0"))
    opened = threading.Event()

    def watch() -> None:
        with admin.get(server.url + CM + "?watch=true&timeoutSeconds=2", stream=True):
            opened.set()
            time.sleep(1.0)

    thread = threading.Thread(target=watch)
    thread.start()
    assert opened.wait(30)
    assert float(scrape(admin, server)[series]) == base + 1
    thread.join()
    deadline = time.monotonic() + 30
    while float(scrape(admin, server)[series]) != base and time.monotonic() < deadline:
        time.sleep(0.1)
    assert float(scrape(admin, server)[series]) == base


def test_a_watch_ends_when_its_client_goes_away(server: Server, admin: requests.Session) -> None:
    """The handler is cancelled on disconnect (no timeoutSeconds: it would run 30 min)."""
    series = (
        'apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",'
        'scope="namespace",subresource="",verb="WATCH",version="v1"}'
    )
    base = float(scrape(admin, server).get(series, "0"))
    response = admin.get(server.url + CM + "?watch=true", stream=True)
    assert response.status_code == 200
    assert float(scrape(admin, server)[series]) == base + 1
    response.raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)  # gone, whatever holds it
    deadline = time.monotonic() + 30
    while float(scrape(admin, server)[series]) != base and time.monotonic() < deadline:
        time.sleep(0.05)
    assert float(scrape(admin, server)[series]) == base


def test_a_request_is_cancelled_when_its_client_goes_away(
    server: Server, admin: requests.Session
) -> None:
    """A read waiting (up to 3 s) for a future resourceVersion stops waiting at once."""
    series = 'apiserver_current_inflight_requests{request_kind="readOnly"}'
    base = float(scrape(admin, server)[series])  # the scrape itself is one
    future = int(admin.get(server.url + CM).json()["metadata"]["resourceVersion"]) + 1000
    context = ssl.create_default_context(cafile=server.ca)
    assert server.admin_cert is not None
    context.load_cert_chain(*server.admin_cert)
    host, port = server.url.removeprefix("https://").split(":")
    started = time.monotonic()
    with context.wrap_socket(
        socket.create_connection((host, int(port))), server_hostname=host
    ) as tls:
        query = f"resourceVersion={future}&resourceVersionMatch=NotOlderThan"
        tls.sendall(f"GET {CM}?{query} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        while float(scrape(admin, server)[series]) != base + 1 and time.monotonic() < started + 1:
            time.sleep(0.02)
        assert float(scrape(admin, server)[series]) == base + 1
    while float(scrape(admin, server)[series]) != base and time.monotonic() < started + 2.5:
        time.sleep(0.05)
    assert float(scrape(admin, server)[series]) == base


def test_storage_objects_count_what_list_returns(server: Server, admin: requests.Session) -> None:
    listed = admin.get(server.url + "/api/v1/configmaps").json()["items"]
    samples = scrape(admin, server)
    assert float(samples['apiserver_storage_objects{resource="configmaps"}']) == len(listed)
    assert float(samples['apiserver_resource_objects{group="",resource="configmaps"}']) == len(
        listed
    )
    size = [s for s in samples if s.startswith("apiserver_storage_size_bytes{storage_cluster_id=")]
    assert len(size) == 1 and float(samples[size[0]]) > 0
    assert (
        float(samples['etcd_requests_total{group="",operation="list",resource="configmaps"}']) > 0
    )


def test_lists_are_counted_as_kube_counts_them(server: Server, admin: requests.Session) -> None:
    """A list read from the database (LMDB; etcd when its watch cache cannot prove itself
    current) is counted in ``apiserver_storage_list_*``, one the watch cache serves in
    ``apiserver_cache_list_*``."""
    namespace = {"metadata": {"name": "list-metrics"}}
    assert admin.post(server.url + "/api/v1/namespaces", json=namespace).status_code == 201
    url = server.url + "/api/v1/namespaces/list-metrics/secrets"
    for name in ("one", "two"):
        meta = {"name": name, "labels": {"pick": str(name == "one").lower()}}
        assert admin.post(url, json={"metadata": meta}).status_code == 201
    objects = '{group="",resource="secrets"}'
    cached = '{group="",index="",resource="secrets"}'
    expected = [{"storage": [1, 2, 2, 1], "cache": [0, 0, 0, 0]}]
    if E2E_ETCD:  # kube's cache has no evaluated count
        expected.append({"storage": [0, 0, 0, 0], "cache": [1, 2, 0, 1]})
    for _ in range(3):  # a window in which no server-side reader listed Secrets too
        before = scrape(admin, server)
        r = admin.get(url, params={"labelSelector": "pick=true"})
        assert [i["metadata"]["name"] for i in r.json()["items"]] == ["one"]
        after = scrape(admin, server)
        counts = {
            family: [
                delta(before, after, f"apiserver_{family}_list_{name}{labels}")
                for name, labels in (
                    ("total", scope),
                    ("fetched_objects_total", scope),
                    ("evaluated_objects_total", objects),
                    ("returned_objects_total", objects),
                )
            ]
            for family, scope in (("storage", objects), ("cache", cached))
        }
        if counts in expected:
            break
    assert counts in expected
    # resourceVersion=0: on etcd the cache's as it stands, whatever etcd's version.
    before = scrape(admin, server)
    assert admin.get(url, params={"resourceVersion": "0"}).ok
    after = scrape(admin, server)
    family, scope = ("cache", cached) if E2E_ETCD else ("storage", objects)
    assert delta(before, after, f"apiserver_{family}_list_fetched_objects_total{scope}") == 2


def test_watches_are_counted_in_kubes_watch_cache_families(
    server: Server, admin: requests.Session
) -> None:
    """The initial events a watch is sent, the events the server's watch cache takes in
    (under ``--workers`` every worker's cache takes in every event: they add up), and its
    revision, the newest a list reports."""
    namespace = {"metadata": {"name": "watch-metrics"}}
    assert admin.post(server.url + "/api/v1/namespaces", json=namespace).status_code == 201
    url = server.url + "/api/v1/namespaces/watch-metrics/configmaps"
    labels = '{group="",resource="configmaps"}'
    series = f"apiserver_watch_cache_events_received_total{labels}"
    workers = int(E2E_WORKERS or "1")
    start = float(scrape(admin, server).get(series, 0))
    for name in ("one", "two"):
        assert admin.post(url, json={"metadata": {"name": name}}).status_code == 201
    # Two replicas on etcd each take the creates in from their own watch: the one that
    # did not serve them may be a moment behind.
    before = _once_every_cache_has(admin, server, series, start + 2 * workers)
    params = {"watch": "1", "sendInitialEvents": "true", "allowWatchBookmarks": "true"}
    params |= {"resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "1"}
    with admin.get(url, params=params, stream=True) as watch:
        types = [json.loads(line)["type"] for line in watch.iter_lines()]
    assert types[:3] == ["ADDED", "ADDED", "BOOKMARK"]
    assert admin.post(url, json={"metadata": {"name": "three"}}).status_code == 201
    listed = admin.get(url).json()["metadata"]["resourceVersion"]
    after = _once_every_cache_has(admin, server, series, start + 3 * workers)
    assert delta(before, after, f"apiserver_init_events_total{labels}") == 2
    received = delta(before, after, series)
    assert received == workers
    assert (
        delta(before, after, f"apiserver_watch_cache_events_dispatched_total{labels}") == received
    )
    revision = float(after[f"apiserver_watch_cache_resource_version{labels}"])
    assert revision >= int(listed)
    # The history sizes of etcd's watch cache (LMDB's change log is its history).
    assert (f"watch_cache_capacity{labels}" in after) == bool(E2E_ETCD)
    # Each worker's cache was filled once, at its start.
    assert float(after[f"apiserver_watch_cache_initializations_total{labels}"]) == workers


def test_a_read_that_waits_for_the_watch_cache_is_timed(
    server: Server, admin: requests.Session
) -> None:
    """kube's read wait: a list of a revision the cache has yet to reach waits for it (here
    until the 3 s run out: 504) and is observed however the wait ends; a read the cache
    can already serve is not."""
    labels = '{group="",resource="configmaps"}'
    count = f"apiserver_watch_cache_read_wait_seconds_count{labels}"
    before = scrape(admin, server)
    assert admin.get(server.url + CM, params={"resourceVersion": "0"}).status_code == 200
    r = admin.get(server.url + CM, params={"resourceVersion": "999999999"})
    assert r.status_code == 504 and r.json()["reason"] == "Timeout"
    after = scrape(admin, server)
    assert delta(before, after, count) == 1
    assert delta(before, after, f"apiserver_watch_cache_read_wait_seconds_sum{labels}") >= 2.99


def _once_every_cache_has(
    admin: requests.Session, server: Server, series: str, events: float
) -> dict[str, str]:
    """A scrape once ``series`` (summed over the workers) counts ``events``, or after 5 s."""
    deadline = time.monotonic() + 5
    while True:
        samples = scrape(admin, server)
        if float(samples.get(series, 0)) >= events or time.monotonic() > deadline:
            return samples
        time.sleep(0.05)


def test_dashboard_families_and_build_info(server: Server, admin: requests.Session) -> None:
    admin.get(server.url + CM)
    samples = scrape(admin, server)
    names = {series.partition("{")[0] for series in samples}
    assert set(DASHBOARD_FAMILIES) <= names
    assert not [n for n in names if n.endswith("_created")]
    build = [s for s in samples if s.startswith("kubernetes_build_info{")]
    assert len(build) == 1 and 'major="1",minor="36"' in build[0]
    assert samples['apiserver_current_inflight_requests{request_kind="mutating"}'] == "0"


def test_the_apiservers_own_work_queues_are_reported(
    server: Server, admin: requests.Session
) -> None:
    """kube's ``workqueue_*`` families for the queues kube-apiserver has: the registration
    of every APIService the server serves, as kube's (21 with the built-in groups)."""
    samples = scrape(admin, server)
    registered = float(samples['workqueue_adds_total{name="APIServiceRegistrationController"}'])
    assert registered >= 21
    for queue in (
        "APIServiceRegistrationController",
        "RemoteAvailabilityController",
        "cluster_authentication_trust_controller",
        "crd_finalizer",
        "crd_naming_condition_controller",
        "legacy_token_tracking_controller",
    ):
        label = f'{{name="{queue}"}}'
        for family in ("workqueue_depth", "workqueue_retries_total"):
            assert family + label in samples, family + label
        assert f'workqueue_queue_duration_seconds_bucket{{name="{queue}",le="1e-08"}}' in samples
        assert f"workqueue_work_duration_seconds_count{label}" in samples
        assert float(samples[f"workqueue_longest_running_processor_seconds{label}"]) < 60
    # kube-controller-manager's queues are its own endpoint's, not the API server's.
    assert not [s for s in samples if s.startswith('workqueue_adds_total{name="deployment"')]


def _promtool(text: bytes) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.fail("promtool is missing: scripts/test installs Debian's prometheus package")
    return subprocess.run(
        [tool, "check", "metrics"],
        input=text.decode(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_promtool_accepts_text_format(server: Server, admin: requests.Session) -> None:
    admin.get(server.url + CM)
    r = admin.get(server.url + "/metrics")
    checked = _promtool(r.content)
    problems = set((checked.stdout + checked.stderr).splitlines())
    assert problems <= KUBE_LINTS, problems - KUBE_LINTS
    assert checked.returncode == (3 if problems else 0)  # 3: lint problems only, parse fine


def test_openmetrics_scrape_parses_strictly(server: Server, admin: requests.Session) -> None:
    r = admin.get(server.url + "/metrics", headers={"Accept": OPENMETRICS})
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    assert r.text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(r.text)}
    assert families["apiserver_request"].type == "counter"
    assert families["authentication_attempts"].type == "counter"
    # promtool reads only the Prometheus text format: it parses this scrape, and its only
    # complaints are the OpenMetrics counter HELP lines naming the family without _total,
    # and kube's own names it finds fault with.
    checked = _promtool(r.content)
    for problem in (checked.stdout + checked.stderr).splitlines():
        if problem in KUBE_LINTS:
            continue
        assert problem.endswith(" no help text") and problem.split()[0].endswith("_total"), problem


def test_admission_steps_are_timed(server: Server, admin: requests.Session) -> None:
    step = "apiserver_admission_step_admission_duration_seconds_count"
    admitted = f'{step}{{operation="CREATE",rejected="false",type="admit"}}'
    validated = f'{step}{{operation="CREATE",rejected="false",type="validate"}}'
    refused = f'{step}{{operation="CREATE",rejected="true",type="admit"}}'
    # The counters are the server's: a controller's write in between (a namespace's
    # root CA ConfigMap) counts too, so a round with company is tried again.
    for attempt in range(5):
        before = scrape(admin, server)
        name = f"metrics-step-{attempt}"
        assert admin.post(server.url + CM, json={"metadata": {"name": name}}).status_code == 201
        # NamespaceLifecycle refuses a write into a namespace that does not exist.
        gone = "/api/v1/namespaces/metrics-no-such-ns/configmaps"
        assert admin.post(server.url + gone, json={"metadata": {"name": "x"}}).status_code == 404
        after = scrape(admin, server)
        counted = [delta(before, after, m) for m in (admitted, validated, refused)]
        if counted == [1, 1, 1]:
            break
    assert counted == [1, 1, 1]


def _slis(admin: requests.Session, server: Server) -> dict[str, float]:
    r = admin.get(server.url + "/metrics/slis")
    assert r.status_code == 200
    assert (
        r.headers["Content-Type"]
        == "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
    )
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in r.text.splitlines()
        if line and not line.startswith("#")
    }


def test_health_checks_are_kubes_slis(server: Server, admin: requests.Session) -> None:
    """component-base's /metrics/slis: each check /readyz runs, its last result and the
    count of each result; one check's own path counts nothing; /metrics lists none of it."""
    before = _slis(admin, server)
    admin.get(server.url + "/readyz")
    admin.get(server.url + "/readyz?exclude=ping")
    admin.get(server.url + "/livez/ping")
    after = _slis(admin, server)
    total = 'kubernetes_healthchecks_total{name="ping",status="success",type="readyz"}'
    assert after[total] - before.get(total, 0) == 1
    assert after['kubernetes_healthcheck{name="ping",type="readyz"}'] == 1
    shutdown = 'kubernetes_healthchecks_total{name="shutdown",status="success",type="readyz"}'
    assert after[shutdown] - before.get(shutdown, 0) == 2
    ping_livez = 'kubernetes_healthchecks_total{name="ping",status="success",type="livez"}'
    assert after.get(ping_livez, 0) == before.get(ping_livez, 0)  # /livez/ping: not counted
    assert "process_start_time_seconds" in after
    scraped = admin.get(server.url + "/metrics")
    assert "kubernetes_healthcheck" not in scraped.text
    # the scraped process's start (with --workers the SLIs' is the earliest worker's)
    started = after["process_start_time_seconds"]
    assert abs(int(scraped.headers["Process-Start-Time-Unix"]) - started) < 60
    text = admin.get(server.url + "/metrics/slis").text
    assert "# HELP process_start_time_seconds [ALPHA] Start time of the process since " in text
    assert "# HELP kubernetes_healthcheck [STABLE] This metric records the result of a " in text


def test_each_metrics_path_resets_its_own(server: Server, admin: requests.Session) -> None:
    """kube's two registries reset apart: DELETE /metrics leaves the SLIs."""
    admin.get(server.url + "/readyz")
    assert admin.delete(server.url + "/metrics").text == "metrics reset\n"
    assert any(k.startswith("kubernetes_healthcheck") for k in _slis(admin, server))
    reset = admin.delete(server.url + "/metrics/slis")
    assert (reset.status_code, reset.text) == (200, "metrics reset\n")
    assert not any(k.startswith("kubernetes_healthcheck") for k in _slis(admin, server))
