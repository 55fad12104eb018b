"""List semantics: the resourceVersion table, chunking, continue tokens, selectors."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import orjson
import pytest
import requests

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.crds import crd_manifest, create_crd, crontab, delete_crd, ns_path


def make_namespace(session: requests.Session, server: Server, name: str) -> str:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert session.post(server.url + "/api/v1/namespaces", json=body).status_code == 201
    return f"/api/v1/namespaces/{name}/configmaps"


def add(
    session: requests.Session, server: Server, base: str, name: str, labels: dict | None = None
) -> dict:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
    }
    r = session.post(server.url + base, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def invalid_list_options(message: str) -> dict:
    field_message = message.split(": ", 1)[1]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'ListOptions.meta.platform.io "" is invalid: {message}',
        "reason": "Invalid",
        "details": {
            "group": "meta.platform.io",
            "kind": "ListOptions",
            "causes": [
                {
                    "reason": "FieldValueForbidden",
                    "message": field_message,
                    "field": "resourceVersionMatch",
                }
            ],
        },
        "code": 422,
    }


def test_lists_across_namespaces_come_in_kubes_key_order(
    server: Server, admin: requests.Session
) -> None:
    """kube lists keys ``<namespace>/<name>``, so "order-b" comes before "order" ('-' sorts
    before '/') and "orderb" after: as kubectl shows it, whole or page by page."""
    for namespace in ("orderb", "order", "order-b"):
        add(admin, server, make_namespace(admin, server, namespace), "cm", {"order": "yes"})
    expected = ["order-b", "order", "orderb"]
    whole = admin.get(server.url + "/api/v1/configmaps?labelSelector=order%3Dyes").json()
    assert [i["metadata"]["namespace"] for i in whole["items"]] == expected
    columns = "custom-columns=NS:.metadata.namespace"
    shown = server.kubectl(
        "get", "cm", "-A", "-l", "order=yes", "--chunk-size=1", "-o", columns, "--no-headers"
    ).stdout.split()
    assert shown == expected


def test_chunked_list_is_one_snapshot(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "chunks")
    for i in range(5):
        add(admin, server, base, f"c{i}")
    first = admin.get(server.url + base + "?limit=2").json()
    meta = first["metadata"]
    assert [i["metadata"]["name"] for i in first["items"]] == ["c0", "c1"]
    assert meta["remainingItemCount"] == 3 and meta["continue"]
    add(admin, server, base, "c2a")  # a later write is not in this list
    second = admin.get(server.url + base + f"?limit=2&continue={meta['continue']}").json()
    assert [i["metadata"]["name"] for i in second["items"]] == ["c2", "c3"]
    assert second["metadata"]["resourceVersion"] == meta["resourceVersion"]
    assert second["metadata"]["remainingItemCount"] == 1
    third = admin.get(
        server.url + base + f"?limit=2&continue={second['metadata']['continue']}"
    ).json()
    assert [i["metadata"]["name"] for i in third["items"]] == ["c4"]
    assert "continue" not in third["metadata"] and "remainingItemCount" not in third["metadata"]


def _token(start: str, revision: int) -> str:
    raw = orjson.dumps({"v": "meta.platform.io/v1", "rv": revision, "start": start})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _start_of(token: str) -> str:
    return str(orjson.loads(base64.urlsafe_b64decode(token + "=="))["start"])


def test_continue_tokens_hold_kubes_start_keys(server: Server, admin: requests.Session) -> None:
    """A token's start key is relative to the list's own prefix, as kube's: the next
    name in a namespace, ``<namespace>/<name>`` across namespaces.  kube joins a token
    to the list it is given to, so a namespace's token pages another namespace from the
    same name on; a key that would leave the list is refused."""
    one = make_namespace(admin, server, "tokens-one")
    two = make_namespace(admin, server, "tokens-two")
    for base in (one, two):
        for name in ("k1", "k2", "k3"):
            add(admin, server, base, name, {"tokens": "yes"})
    mine = "&labelSelector=tokens%3Dyes"
    page = admin.get(server.url + one + "?limit=1" + mine).json()
    token = page["metadata"]["continue"]
    assert _start_of(token) == "k1\x00"
    other = admin.get(server.url + two + "?continue=" + token + mine).json()
    assert [i["metadata"]["name"] for i in other["items"]] == ["k2", "k3"]
    everywhere = admin.get(server.url + "/api/v1/configmaps?limit=1").json()
    start = _start_of(everywhere["metadata"]["continue"])
    item = everywhere["items"][0]["metadata"]
    assert start == f"{item['namespace']}/{item['name']}\x00"
    revision = int(page["metadata"]["resourceVersion"])
    at = _token("tokens-one/k2\x00", revision)
    rest = admin.get(server.url + "/api/v1/configmaps?limit=3&continue=" + at + mine).json()
    listed = [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in rest["items"]]
    assert listed == [("tokens-one", "k3"), ("tokens-two", "k1"), ("tokens-two", "k2")]
    # A hand-made key without the NUL: kube starts at it, the name itself included.
    made = admin.get(server.url + one + "?continue=" + _token("k2", revision) + mine).json()
    assert [i["metadata"]["name"] for i in made["items"]] == ["k2", "k3"]
    # Issued by a release whose keys were relative to the kind: still read as it meant.
    old_token = _token("tokens-one\x00k1\x00", revision)
    old = admin.get(server.url + one + "?continue=" + old_token + mine)
    assert [i["metadata"]["name"] for i in old.json()["items"]] == ["k2", "k3"]
    for bad in ("../tokens-two/k1\x00", "a//b", "k1/"):
        r = admin.get(server.url + one + "?continue=" + _token(bad, revision))
        assert r.status_code == 400
        assert r.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"invalid continue token: continue key is not valid: {bad}",
            "reason": "BadRequest",
            "code": 400,
        }


def test_selectors_with_limit_omit_remaining_count(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "sel")
    for i in range(6):
        add(admin, server, base, f"s{i}", {"even": str(i % 2 == 0).lower()})
    page = admin.get(server.url + base + "?limit=2&labelSelector=even%3Dtrue").json()
    assert [i["metadata"]["name"] for i in page["items"]] == ["s0", "s2"]
    assert "remainingItemCount" not in page["metadata"] and page["metadata"]["continue"]
    rest = admin.get(
        server.url
        + base
        + f"?limit=2&labelSelector=even%3Dtrue&continue={page['metadata']['continue']}"
    ).json()
    assert [i["metadata"]["name"] for i in rest["items"]] == ["s4"]
    by_name = admin.get(server.url + base + "?fieldSelector=metadata.name%3Ds3").json()
    assert [i["metadata"]["name"] for i in by_name["items"]] == ["s3"]
    r = admin.get(server.url + base + "?fieldSelector=spec.nodeName%3Dx")
    assert r.status_code == 400 and r.json()["message"] == (  # kube's default conversion
        '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )


def test_old_clients_select_pods_by_spec_host(server: Server, admin: requests.Session) -> None:
    """kube's Pod field-label conversion still takes ``spec.host``, v1's first name for
    ``spec.nodeName``, and selects by the node."""
    base = make_namespace(admin, server, "host").replace("/configmaps", "/pods")
    for name, node in (("a", "n1"), ("b", "n2")):
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
        }
        assert admin.post(server.url + base, json=body).status_code == 201
    for selector in ("spec.host%3Dn1", "spec.nodeName%3Dn1", "spec.host!%3Dn2"):
        page = admin.get(server.url + base + "?fieldSelector=" + selector)
        assert page.status_code == 200
        assert [i["metadata"]["name"] for i in page.json()["items"]] == ["a"]


def _fetched(admin: requests.Session, server: Server) -> float:
    """Objects lists have read of ConfigMaps so far, from the database or a watch cache."""
    families = ("apiserver_storage_list_fetched", "apiserver_cache_list_fetched")
    lines = admin.get(server.url + "/metrics").text.splitlines()
    mine = [line for line in lines if line.startswith(families) and 'resource="configmaps"' in line]
    return sum(float(line.rpartition(" ")[2]) for line in mine)


def test_a_field_selector_naming_the_object_or_namespace_reads_only_its_keys(
    server: Server, admin: requests.Session
) -> None:
    """kube's MatchesSingle and MatchesSingleNamespace: ``kubectl get cm a -w`` and
    ``kubectl wait`` list by ``metadata.name``, which reads the one key, unpaged."""
    base = make_namespace(admin, server, "one-key")
    for name in ("a", "ab", "b"):
        add(admin, server, base, name)
    add(admin, server, make_namespace(admin, server, "one-key-other"), "a")

    def names(path: str, **params: str) -> tuple[list[str], dict]:
        r = admin.get(server.url + path, params=params)
        assert r.status_code == 200, r.text
        return [i["metadata"]["name"] for i in r.json()["items"]], r.json()["metadata"]

    before = _fetched(admin, server)
    assert names(base, fieldSelector="metadata.name=a", limit="1")[0] == ["a"]
    assert _fetched(admin, server) - before == 1  # "a" alone, not "ab", which it prefixes
    got, meta = names(base, fieldSelector="metadata.name=a", limit="1")
    assert "continue" not in meta  # one key: no pages, as kube's
    everywhere = "/api/v1/configmaps"
    selector = "metadata.namespace=one-key,metadata.name=ab"
    assert names(everywhere, fieldSelector=selector)[0] == ["ab"]
    before = _fetched(admin, server)
    got, meta = names(everywhere, fieldSelector="metadata.namespace=one-key", limit="2")
    assert got == ["a", "ab"] and _fetched(admin, server) - before == 2
    rest, _ = names(
        everywhere,
        fieldSelector="metadata.namespace=one-key",
        limit="2",
        **{"continue": meta["continue"]},
    )
    assert rest == ["b"]  # the token goes on across namespaces, where the list began
    assert names(everywhere, fieldSelector="metadata.name=a")[0] == ["a", "a"]  # no namespace: all
    params = {"watch": "1", "fieldSelector": "metadata.name=a", "timeoutSeconds": "1"}
    with admin.get(server.url + base, params=params, stream=True) as watch:
        events = [orjson.loads(line) for line in watch.iter_lines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a")]


def test_resource_version_table(server: Server, admin: requests.Session) -> None:
    base = make_namespace(admin, server, "rvs")
    a = add(admin, server, base, "a")
    rv_a = a["metadata"]["resourceVersion"]
    add(admin, server, base, "b")
    # Most recent (unset) and Any ("0") see both; not-older-than sees the newest state.
    for query in (
        "",
        "?resourceVersion=0",
        f"?resourceVersion={rv_a}",
        f"?resourceVersion={rv_a}&resourceVersionMatch=NotOlderThan",
    ):
        names = [
            i["metadata"]["name"] for i in admin.get(server.url + base + query).json()["items"]
        ]
        assert names == ["a", "b"], query
    # Exact: the state at that revision, and the collection reports exactly it.
    exact = admin.get(
        server.url + base + f"?resourceVersion={rv_a}&resourceVersionMatch=Exact"
    ).json()
    assert [i["metadata"]["name"] for i in exact["items"]] == ["a"]
    assert exact["metadata"]["resourceVersion"] == rv_a
    # limit with a non-zero resourceVersion and no match is Exact too.
    legacy = admin.get(server.url + base + f"?resourceVersion={rv_a}&limit=10").json()
    assert [i["metadata"]["name"] for i in legacy["items"]] == ["a"]
    # get: "0" and not-older-than both serve the object
    assert admin.get(server.url + base + f"/a?resourceVersion={rv_a}").status_code == 200
    # "0" is any state, served whole: kube's watch cache ignores the limit
    for query in (
        "?resourceVersion=0&limit=1",
        "?resourceVersion=0&limit=1&resourceVersionMatch=NotOlderThan",
    ):
        whole = admin.get(server.url + base + query).json()
        assert [i["metadata"]["name"] for i in whole["items"]] == ["a", "b"], query
        assert set(whole["metadata"]) == {"resourceVersion"}, query


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "?resourceVersionMatch=Exact",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "?resourceVersion=0&resourceVersionMatch=Exact",
            'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
    ],
)
def test_invalid_combinations(
    server: Server, admin: requests.Session, query: str, message: str
) -> None:
    r = admin.get(server.url + "/api/v1/namespaces/default/configmaps" + query)
    assert r.status_code == 422
    assert r.json() == invalid_list_options(message)


def test_continue_errors(server: Server, admin: requests.Session) -> None:
    base = "/api/v1/namespaces/default/configmaps"
    r = admin.get(server.url + base + "?continue=garbage&limit=1")
    assert r.status_code == 400 and r.json()["message"].startswith(
        "invalid continue token: continue key is not valid"
    )
    page = admin.get(server.url + "/api/v1/namespaces?limit=1").json()
    r = admin.get(
        server.url
        + "/api/v1/namespaces?limit=1&resourceVersion=5&continue="
        + page["metadata"]["continue"]
    )
    assert r.status_code == 400
    assert r.json()["message"] == "specifying resource version is not allowed when using continue"
    r = admin.get(
        server.url
        + base
        + "?resourceVersionMatch=Exact&resourceVersion=1&continue="
        + page["metadata"]["continue"]
    )
    assert r.status_code == 422
    r = admin.get(server.url + base + "?resourceVersion=abc")
    assert r.status_code == 400 and r.json()["message"].startswith(
        'invalid resource version: resourceVersion: Invalid value: "abc"'
    )


def test_future_resource_version_is_504(server: Server, admin: requests.Session) -> None:
    r = admin.get(server.url + "/api/v1/namespaces/default/configmaps?resourceVersion=999999999")
    assert r.status_code == 504
    body = r.json()
    assert body["reason"] == "Timeout" and body["message"].startswith(
        "Timeout: Too large resource version: 999999999, current: "
    )
    assert body["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    assert r.headers["Retry-After"] == "1"


def _too_large(wanted: int, current: int, retry: bool) -> dict:
    details: dict = {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    }
    if retry:
        details["retryAfterSeconds"] = 1
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"Timeout: Too large resource version: {wanted}, current: {current}",
        "reason": "Timeout",
        "details": details,
        "code": 504,
    }


@pytest.mark.parametrize(
    ("query", "retry"),
    [
        ("resourceVersion=R&resourceVersionMatch=NotOlderThan&limit=1", True),
        ("resourceVersion=R&resourceVersionMatch=Exact", False),
        ("resourceVersion=R&limit=1", False),  # the legacy exact read
        ("limit=1&continue=TOKEN", False),
    ],
)
def test_a_future_revision_wanted_exactly_is_504_without_retry_advice(
    server: Server, admin: requests.Session, query: str, retry: bool
) -> None:
    """kube's watch cache waits for a revision it has not reached, then answers 504;
    only a not-older-than read advises a retry (Retry-After, retryAfterSeconds).  A
    continue token holding a future revision (a replica ahead, or a made-up token)
    waits as an exact read does (it was a 500 naming a storage key)."""
    wanted = 2**62
    token = _token("a\x00", wanted)
    url = server.url + "/api/v1/namespaces/default/configmaps?"
    r = admin.get(url + query.replace("=R", f"={wanted}").replace("TOKEN", token))
    assert r.status_code == 504
    current = int(r.json()["message"].rsplit(" ", 1)[1])
    assert r.json() == _too_large(wanted, current, retry)
    assert r.headers.get("Retry-After") == ("1" if retry else None)


def test_the_request_timeout_cuts_a_wait_short_with_kubes_filter_status(tmp_path: Path) -> None:
    """--request-timeout below the 3 s wait for a future revision: kube's timeout filter
    answers first, with its own Status (no kind or apiVersion, empty details)."""
    running = start_server(tmp_path / "data", "--request-timeout", "1s")
    try:
        admin = session_for(running, cert=running.admin_cert)
        started = time.monotonic()
        r = admin.get(running.url + "/api/v1/namespaces/default/configmaps?resourceVersion=9999999")
        assert time.monotonic() - started < 2.5
        assert r.status_code == 504 and "Retry-After" not in r.headers
        assert r.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert r.content == (
            b'{"metadata":{},"status":"Failure","message":"Timeout: request did not complete'
            b' within the allotted timeout","reason":"Timeout","details":{},"code":504}\n'
        )
        assert admin.get(running.url + "/api/v1/namespaces/default/configmaps").status_code == 200
    finally:
        running.stop()


def test_a_shorter_timeout_in_the_url_applies_and_a_bad_one_is_400_before_authentication(
    server: Server, admin: requests.Session
) -> None:
    """kube's deadline filter: ``?timeout=`` (kubectl's --request-timeout sends it) when
    shorter than --request-timeout; a bad duration is refused before authentication, but
    not on a watch, whose own code reads the parameter."""
    base = server.url + "/api/v1/namespaces/default/configmaps"
    started = time.monotonic()
    r = admin.get(base + "?resourceVersion=9999999&timeout=500ms")
    assert time.monotonic() - started < 2.5
    assert r.status_code == 504 and r.json()["message"] == (
        "Timeout: request did not complete within the allotted timeout"
    )
    for fine in ("0s", "-1s", "5m"):
        assert admin.get(base + "?limit=1&timeout=" + fine).status_code == 200
    stranger = session_for(server, token="nonsense")
    r = stranger.get(base + "?timeout=abc")
    assert r.status_code == 400 and r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'invalid timeout specified in the request URL - time: invalid duration "abc"',
        "reason": "BadRequest",
        "code": 400,
    }
    assert stranger.get(base + "?timeout=abc&watch=1").status_code == 401
    # Go's time.ParseDuration, word for word (as the reference answered each)
    for raw, why in (
        ("1e400s", 'time: unknown unit "e" in duration "1e400s"'),
        ("9999999999h", 'time: invalid duration "9999999999h"'),
        ("1", 'time: missing unit in duration "1"'),
        ("%C3%A9", 'time: invalid duration "\\xc3\\xa9"'),
    ):
        r = admin.get(base + "?timeout=" + raw)
        assert (r.status_code, r.json()["message"]) == (
            400,
            f"invalid timeout specified in the request URL - {why}",
        )


def test_expired_revisions_are_410(tmp_path: Path) -> None:
    running = start_server(tmp_path / "data", "--etcd-compaction-interval", "1s")
    try:
        admin = session_for(running, cert=running.admin_cert)
        base = make_namespace(admin, running, "old")
        first = add(admin, running, base, "a")
        add(admin, running, base, "b")
        page = admin.get(running.url + base + "?limit=1").json()
        add(admin, running, base, "c")
        time.sleep(2.5)  # the window passes and compaction runs
        add(admin, running, base, "d")
        r = admin.get(
            running.url
            + base
            + f"?resourceVersion={first['metadata']['resourceVersion']}&resourceVersionMatch=Exact"
        )
        assert r.status_code == 410
        assert (
            r.json()["reason"] == "Expired"
            and r.json()["message"] == "The resourceVersion for the provided list is too old."
        )
        r = admin.get(running.url + base + "?limit=1&continue=" + page["metadata"]["continue"])
        assert r.status_code == 410
        body = r.json()
        assert body["reason"] == "Expired" and body["message"].startswith(
            "The provided continue parameter is too old"
        )
        # The fresh token continues the list, inconsistently, from where the old one stopped;
        # the pages after that are read at the revision of its first (kube's returned RV).
        rest = admin.get(
            running.url + base + "?limit=1&continue=" + body["metadata"]["continue"]
        ).json()
        assert [i["metadata"]["name"] for i in rest["items"]] == ["b"]
        add(admin, running, base, "e")
        later = admin.get(
            running.url + base + "?limit=10&continue=" + rest["metadata"]["continue"]
        ).json()
        assert [i["metadata"]["name"] for i in later["items"]] == ["c", "d"]
        assert later["metadata"]["resourceVersion"] == rest["metadata"]["resourceVersion"]
    finally:
        running.stop()


def test_built_in_list_items_name_no_type_custom_ones_do(
    server: Server, admin: requests.Session
) -> None:
    """kube lists built-in kinds as typed Go structs with an empty TypeMeta, so a typed
    client's listed item equals the fetched one (upstream's watch-list e2e cases compare
    them); custom resources are unstructured and keep both fields in their items."""
    base = make_namespace(admin, server, "untyped-items")
    for name in ("a", "b"):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        assert admin.post(server.url + base, json=body).status_code == 201
    fetched = admin.get(server.url + base + "/a").json()
    for query in ("", "?pretty=true"):
        listed = admin.get(server.url + base + query).json()
        assert (listed["kind"], listed["apiVersion"]) == ("ConfigMapList", "v1")
        first = listed["items"][0]
        assert first == {k: v for k, v in fetched.items() if k not in ("kind", "apiVersion")}
    empty = admin.get(server.url + base + "?labelSelector=none").json()
    assert empty["items"] == []
    as_yaml = admin.get(server.url + base, headers={"Accept": "application/yaml"}).text
    assert "\n  kind: ConfigMap" not in as_yaml and "\nkind: ConfigMapList" in as_yaml
    group = "untyped.example.com"
    create_crd(admin, server, crd_manifest(group))
    try:
        ns = base.split("/")[4]
        path = server.url + ns_path(group, ns)
        assert admin.post(path, json=crontab("c", group)).status_code == 201
        item = admin.get(path).json()["items"][0]
        assert (item["kind"], item["apiVersion"]) == ("CronTab", f"{group}/v1")
    finally:
        delete_crd(admin, server, f"crontabs.{group}")


def test_custom_resource_lists_are_written_as_kubes_unstructured_lists(
    server: Server, admin: requests.Session
) -> None:
    """kube writes a custom resource list from a map: its keys sorted, and
    ``metadata.continue`` present even when empty.  Built-in lists keep their struct
    order and omit an empty continue."""
    base = make_namespace(admin, server, "unstructured-lists")
    ns = base.split("/")[4]
    group = "unstructured.example.com"
    create_crd(admin, server, crd_manifest(group))
    try:
        path = server.url + ns_path(group, ns)
        for name in ("a", "b"):
            assert admin.post(path, json=crontab(name, group)).status_code == 201
        whole = admin.get(path)
        revision = whole.json()["metadata"]["resourceVersion"]
        items = whole.json()["items"]
        assert whole.text.startswith('{"apiVersion":"' + group + '/v1","items":[{')
        tail = '],"kind":"CronTabList","metadata":{"continue":"","resourceVersion":"REV"}}\n'
        assert whole.text.endswith(tail.replace("REV", revision))
        page = admin.get(path + "?limit=1")
        meta = page.json()["metadata"]
        assert list(page.json()) == ["apiVersion", "items", "kind", "metadata"]
        assert list(meta) == ["continue", "remainingItemCount", "resourceVersion"]
        assert meta["continue"] and meta["remainingItemCount"] == 1
        pretty = admin.get(path + "?pretty=true").text
        # its own revision: on etcd any write in between (a controller's) moves it on
        now = pretty.rsplit('"resourceVersion": "', 1)[-1].split('"')[0]
        assert now.isdigit() and int(now) >= int(revision)
        assert pretty.endswith(
            '  "kind": "CronTabList",\n  "metadata": {\n    "continue": "",\n'
            f'    "resourceVersion": "{now}"\n  }}\n}}'
        )
        as_yaml = admin.get(path, headers={"Accept": "application/yaml"}).text
        assert as_yaml.startswith(f"apiVersion: {group}/v1\nitems:\n- ")
        assert as_yaml.endswith(
            f'kind: CronTabList\nmetadata:\n  continue: ""\n  resourceVersion: "{revision}"\n'
        )
        assert [i["metadata"]["name"] for i in items] == ["a", "b"]
        built_in = admin.get(server.url + base)
        assert built_in.text.startswith('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{')
        assert "continue" not in built_in.json()["metadata"]
    finally:
        delete_crd(admin, server, f"crontabs.{group}")


def test_a_taken_name_with_a_generate_name_is_a_generation_conflict(
    server: Server, admin: requests.Session
) -> None:
    """kube's CheckGeneratedNameError looks at generateName alone: an object that also
    names itself is told the server could not generate a unique name (dry run too)."""
    base = make_namespace(admin, server, "generated-conflict")
    add(admin, server, base, "taken")
    body = {"apiVersion": "v1", "kind": "ConfigMap"}
    body["metadata"] = {"name": "taken", "generateName": "g-"}
    for query in ("", "?dryRun=All"):
        r = admin.post(server.url + base + query, json=body)
        assert r.status_code == 409
        assert r.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'configmaps "taken" already exists, the server was not able to '
            "generate a unique name for the object",
            "reason": "AlreadyExists",
            "details": {"name": "taken", "kind": "configmaps", "retryAfterSeconds": 1},
            "code": 409,
        }


def test_a_shard_selector_is_ignored_as_kube_ignores_it_with_its_gate_off(
    server: Server, admin: requests.Session
) -> None:
    """``shardSelector`` (alpha ShardedListAndWatch, off) is in ListOptions and the OpenAPI
    documents; the reference answers the whole list whatever its value, and so does this."""
    base = make_namespace(admin, server, "shards")
    for name in ("a", "b"):
        add(admin, server, base, name)
    for value in ("x", "shardRange(object.metadata.uid,'0x0','0x8')"):
        r = admin.get(server.url + base, params={"shardSelector": value})
        assert r.status_code == 200, r.text
        assert [i["metadata"]["name"] for i in r.json()["items"]] == ["a", "b"]
