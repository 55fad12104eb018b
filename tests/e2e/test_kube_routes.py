"""kube-apiserver v1.36's routes, answered as the reference answered the same requests:
methods, unknown paths and slashes as its muxes match them, OpenAPI's negotiation and
hashes, and the plain handlers (``/metrics`` among them)."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server, session_for
from tests.e2e.test_http import CM


def code_and_reason(response: requests.Response) -> tuple[int, str]:
    """The status code and the Status body's reason."""
    return response.status_code, response.json()["reason"]


def test_openapi_answers_accept_as_kube_does(server: Server, admin: requests.Session) -> None:
    """The v3 index ignores Accept and is text/plain (kube sets no type, Go sniffs one);
    a document asked for in anything but JSON is a bare 406."""
    for accept in ("application/json", "application/yaml", "text/html"):
        index = admin.get(server.url + "/openapi/v3", headers={"Accept": accept})
        assert index.status_code == 200 and "api/v1" in index.json()["paths"]
        assert index.headers["Content-Type"] == "text/plain; charset=utf-8"
    for path in ("/openapi/v2", "/openapi/v3/api/v1"):
        refused = admin.get(server.url + path, headers={"Accept": "application/yaml"})
        assert (refused.status_code, refused.content) == (406, b"")
        varies = "Accept-Encoding, Accept" if path == "/openapi/v2" else "Accept"
        assert "Content-Type" not in refused.headers and refused.headers["Vary"] == varies
        fine = admin.get(server.url + path, headers={"Accept": "application/json, */*"})
        assert fine.status_code == 200 and fine.headers["Content-Type"] == "application/json"
    # client-go's OpenAPISchema() names the deprecated Protobuf type; kube answers the new one.
    pb = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    for accept in (pb, "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"):
        r = admin.get(server.url + "/openapi/v2", headers={"Accept": accept})
        assert (r.status_code, r.headers["Content-Type"]) == (200, pb)
        assert r.content.startswith(b"\n\x032.0\x12")  # swagger "2.0", then info
    r = admin.get(server.url + "/openapi/v3/api/v1", headers={"Accept": pb})
    assert r.status_code == 406


def test_an_openapi_document_is_found_by_its_hash_as_kube_finds_it(
    server: Server, admin: requests.Session
) -> None:
    """Asked of the reference: the index's URL answers with a year's caching; another
    hash is a 301 to the current URL, with no body; no hash is the document, uncached; a
    key with a trailing slash is no key."""
    current = admin.get(server.url + "/openapi/v3").json()["paths"]["api/v1"]["serverRelativeURL"]
    digest = current.split("hash=")[1]
    cached = admin.get(server.url + current)
    assert cached.status_code == 200 and cached.headers["Cache-Control"] == "public, immutable"
    assert cached.headers["Etag"] == f'"{digest}"'
    assert cached.headers["Expires"].endswith(" UTC")
    stale = admin.get(server.url + "/openapi/v3/api/v1?hash=nothex", allow_redirects=False)
    assert (stale.status_code, stale.content) == (301, b"")
    assert stale.headers["Location"] == current
    assert stale.headers["Content-Type"] == "application/json"
    assert stale.headers["Cache-Control"] == "no-cache, private"
    for unhashed in ("/openapi/v3/api/v1", "/openapi/v3/api/v1?hash="):
        plain = admin.get(server.url + unhashed)
        assert plain.status_code == 200 and plain.headers["Cache-Control"] == "no-cache, private"
        assert "Expires" not in plain.headers
    for slashed in ("/openapi/v3/api/v1/", "/openapi/v3/version/"):
        r = admin.get(server.url + slashed)
        assert (r.status_code, r.content) == (404, b"")


def test_methods_and_unknown_paths_answer_as_kubes_routes(
    server: Server, admin: requests.Session
) -> None:
    """As kube-apiserver v1.36 answered: its resource and version routes (go-restful)
    take no HEAD and only GET on watch paths; a PUT body must name the URL's object
    before anything is read; a path no handler owns (outside the API, or a group nobody
    serves) is Go's plain-text 404; the core group and known groups answer a Status."""
    url = server.url
    for path in (
        CM,
        "/api/v1/namespaces",
        "/api/v1/configmaps",
        "/api/v1/namespaces/default/status",
        "/api/v1/watch/namespaces",
        "/api/v1/namespaces?watch=1",
        "/api",
        "/api/v1/",
        "/apis/apps/v1",
        "/version",
    ):
        head = admin.head(url + path)
        assert (head.status_code, head.content) == (405, b""), path
    for path in ("/apis", "/apis/apps", "/healthz"):
        assert admin.head(url + path).status_code == 200, path
    put_watch = admin.put(url + "/api/v1/watch/namespaces", json={}, timeout=5)
    assert code_and_reason(put_watch) == (405, "MethodNotAllowed")
    assert code_and_reason(admin.put(url + "/api/v1/", json={})) == (405, "MethodNotAllowed")

    missing = url + "/api/v1/namespaces/default/configmaps/never-made"
    for body, message in (
        ({}, "the name of the object (never-made based on URL) was undeterminable: "),
        ({"metadata": {"name": "other"}}, "the name of the object (other) does not match "),
        ({"metadata": {"namespace": "elsewhere"}}, "the namespace of the provided object does"),
    ):
        refused = admin.put(missing, json=body)
        assert code_and_reason(refused) == (400, "BadRequest")
        assert refused.json()["message"].startswith(message)
    assert admin.get(missing).status_code == 404

    for path in ("/foo", "/apisx", "/apis/nogroup", "/apis/nogroup/v1/things", "/healthz/no"):
        plain = admin.get(url + path)
        assert (plain.status_code, plain.content) == (404, b"404 page not found\n"), path
        assert plain.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert plain.headers["X-Content-Type-Options"] == "nosniff"
    for path in ("/api/v9", "/api/v1/nothing", "/apis/apps/v9/deployments", "/apis/apps/v2"):
        assert code_and_reason(admin.get(url + path)) == (404, "NotFound"), path
    # a version nobody serves is no route: every method is told what a GET is
    for method in ("OPTIONS", "DELETE", "POST"):
        missing_version = admin.request(method, url + "/apis/apps/v9")
        assert code_and_reason(missing_version) == (404, "NotFound"), method
        no_group = admin.request(method, url + "/apis/nogroup/v1")
        assert (no_group.status_code, no_group.content) == (404, b"404 page not found\n")
        served = admin.request(method, url + "/apis/apps/v1")
        assert code_and_reason(served) == (405, "MethodNotAllowed"), method
    bare = admin.get(url + "/openapi/v3/apis/nogroup/v1")
    assert (bare.status_code, bare.content) == (404, b"")
    assert "Content-Type" not in bare.headers


def test_paths_are_matched_as_kubes_muxes_match_them(
    server: Server, admin: requests.Session
) -> None:
    """As kube-apiserver v1.36 answered: below a go-restful web service's root (``/api``,
    ``/apis/<group>``, ``/version``, the issuer's documents) trailing slashes are trimmed
    before matching and a miss is a Status; a path starting with ``//`` is under no root
    (Go's text 404); kube-openapi owns ``/openapi/v3/`` (a bare 404 for no document); and
    a resource path that names no resource fails kube's RequestInfo filter, a 500 in text
    with an Audit-ID and no Cache-Control."""
    url = server.url
    for path, start in (
        ("/version//", b'{\n  "major": "1"'),
        ("/api//", b'{"kind":"APIVersions"'),
        ("/api/v1//", b'{"kind":"APIResourceList"'),
        ("/apis/apps//", b'{"kind":"APIGroup"'),
        ("/apis/apps/v1///", b'{"kind":"APIResourceList"'),
        ("/openid/v1/jwks//", b'{"keys":'),
        ("/.well-known/openid-configuration//", b'{"issuer":'),
    ):
        r = admin.get(url + path)
        assert (r.status_code, r.content[: len(start)]) == (200, start), path
    for path in (
        "/version/x",
        "/version/x/y",
        "/openid/v1/jwks/x",
        "/.well-known/openid-configuration/x",
    ):
        assert code_and_reason(admin.get(url + path)) == (404, "NotFound"), path
        assert (
            admin.get(url + path).json()["message"]
            == "the server could not find the requested resource"
        )
    assert code_and_reason(admin.delete(url + "/version/x")) == (404, "NotFound")
    for path in ("//version", "//api", "//apis/apps", "/healthz//"):
        plain = admin.get(url + path)
        assert (plain.status_code, plain.content) == (404, b"404 page not found\n"), path
    for path in ("/openapi/v3/", "/openapi/v3//", "/openapi/v3//api/v1"):
        bare = admin.get(url + path)
        assert (bare.status_code, bare.content) == (404, b""), path

    failed = admin.get(url + "/api/v1/watch?a=%22b%22")
    expected = (
        'Internal Server Error: "/api/v1/watch?a=%22b%22": failed to create RequestInfo: '
        "unable to determine kind and namespace from url, /api/v1/watch?a=%22b%22\n"
    )
    assert (failed.status_code, failed.text) == (500, expected)
    assert failed.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert failed.headers["X-Content-Type-Options"] == "nosniff"
    assert "Cache-Control" not in failed.headers and len(failed.headers["Audit-Id"]) == 36
    for path in ("/api/v1/proxy", "/apis/apps/v1/watch/"):
        assert admin.get(url + path).status_code == 500, path
    anonymous = session_for(server).get(url + "/api/v1/watch")  # before authentication
    assert anonymous.status_code == 500


def test_plain_handlers_answer_every_method_as_get(server: Server, admin: requests.Session) -> None:
    """kube's handlers outside go-restful (``/``, ``/apis``, ``/apis/<g>``, the health
    checks, OpenAPI, ``/metrics``) never look at the method: each answered POST, PUT,
    PATCH, DELETE and OPTIONS as GET on kube-apiserver v1.36; its go-restful routes
    answered 405, and unknown paths the plain 404."""
    url = server.url
    as_get = (
        ("/", "application/json", b'{\n  "paths": [\n'),
        ("/apis", "application/json", b'{"kind":"APIGroupList"'),
        ("/apis/apps/", "application/json", b'{"kind":"APIGroup",'),
        ("/healthz", "text/plain; charset=utf-8", b"ok"),
        ("/livez/ping", "text/plain; charset=utf-8", b"ok"),
        ("/readyz", "text/plain; charset=utf-8", b"ok"),
        ("/openapi/v2", "application/json", b'{"swagger":'),
        ("/openapi/v3", "text/plain; charset=utf-8", b'{"paths":'),
        ("/openapi/v3/api/v1", "application/json", b'{"openapi":'),
    )
    for method in ("POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
        for path, content_type, start in as_get:
            r = admin.request(method, url + path, data=b"{}")
            assert (r.status_code, r.headers["Content-Type"]) == (200, content_type), path
            assert r.content.startswith(start), (method, path, r.content[:40])
        for path in ("/api", "/api/v1", "/apis/apps/v1", "/version", "/openid/v1/jwks"):
            assert code_and_reason(admin.request(method, url + path)) == (405, "MethodNotAllowed")
        for path in ("/nope", "/healthz/nope", "/apis/nogroup"):
            plain = admin.request(method, url + path)
            assert (plain.status_code, plain.content) == (404, b"404 page not found\n"), path
        if method != "DELETE":
            scrape = admin.request(method, url + "/metrics")
            assert scrape.status_code == 200 and b"# TYPE apiserver_request_total" in scrape.content


def test_delete_metrics_resets_labelled_series(fresh_server: Server) -> None:
    """kube's ``MetricsWithReset``: DELETE /metrics drops every labelled series (they
    come back when next counted); families without labels stay."""
    admin = session_for(fresh_server, cert=fresh_server.admin_cert)
    url = fresh_server.url
    assert admin.get(url + "/api/v1/namespaces/default/secrets/gone").status_code == 404
    lost = 'apiserver_request_total{code="404",component="apiserver",dry_run="",group="",'
    assert lost in admin.get(url + "/metrics").text
    reset = admin.delete(url + "/metrics")
    assert (reset.status_code, reset.headers["Content-Type"], reset.content) == (
        200,
        "text/plain; charset=utf-8",
        b"metrics reset\n",
    )
    text = admin.get(url + "/metrics").text
    assert lost not in text
    assert "\nprocess_start_time_seconds " in text  # no labels: kept
    assert admin.get(url + "/api/v1/namespaces/default/secrets/gone").status_code == 404
    assert lost in admin.get(url + "/metrics").text  # counted again from zero
    line = next(x for x in admin.get(url + "/metrics").text.splitlines() if x.startswith(lost))
    assert line.endswith(" 1")


# ``/`` of the reference (branded), less its /flagz and its health checks.
ROOT_PATHS = [
    "/.well-known/openid-configuration",
    "/api",
    "/api/v1",
    "/apis",
    "/apis/",
    *[
        path
        for group in (
            "admissionregistration.platform.io/v1",
            "apiextensions.platform.io/v1",
            "apiregistration.platform.io/v1",
            "apps/v1",
            "authentication.platform.io/v1",
            "authorization.platform.io/v1",
            "autoscaling/v1 v2",
            "batch/v1",
            "certificates.platform.io/v1",
            "coordination.platform.io/v1",
            "discovery.platform.io/v1",
            "events.platform.io/v1",
            "flowcontrol.apiserver.platform.io/v1",
            "networking.platform.io/v1",
            "node.platform.io/v1",
            "policy/v1",
            "rbac.authorization.platform.io/v1",
            "resource.platform.io/v1",
            "scheduling.platform.io/v1",
            "storage.platform.io/v1",
        )
        for name, versions in [group.split("/")]
        for path in [f"/apis/{name}"] + [f"/apis/{name}/{v}" for v in versions.split()]
    ],
    "/flagz",
    "/healthz",
    "/livez",
    "/metrics",
    "/metrics/slis",
    "/openapi/v2",
    "/openapi/v3",
    "/openapi/v3/",
    "/openid/v1/jwks",
    "/readyz",
    "/statusz",
    "/version",
]


def test_the_root_lists_every_path_kubes_muxes_list(
    server: Server, admin: requests.Session
) -> None:
    """Each group and each of its versions, ``/apis/``, and every health check's own path,
    as kube lists them (it listed only the groups and the endpoints themselves)."""
    paths = admin.get(server.url + "/").json()["paths"]
    assert paths == sorted(paths)
    # the shared server's other tests leave custom groups: each is listed as kube lists one
    custom = [
        path
        for group in admin.get(server.url + "/apis").json()["groups"]
        if f"/apis/{group['name']}" not in ROOT_PATHS
        for path in [
            f"/apis/{group['name']}",
            *(f"/apis/{v['groupVersion']}" for v in group["versions"]),
        ]
    ]
    assert [p for p in paths if not p.startswith(("/healthz/", "/livez/", "/readyz/"))] == sorted(
        ROOT_PATHS + custom
    )
    for endpoint in ("healthz", "livez", "readyz"):
        checks = admin.get(f"{server.url}/{endpoint}?verbose").text.splitlines()
        names = [line[3:].removesuffix(" ok") for line in checks if line.startswith("[+]")]
        assert "ping" in names
        assert [p for p in paths if p.startswith(f"/{endpoint}/")] == sorted(
            f"/{endpoint}/{name}" for name in names
        )
        assert all(admin.get(f"{server.url}/{endpoint}/{name}").text == "ok" for name in names)


def test_statusz_as_kube_serves_it(server: Server, admin: requests.Session) -> None:
    """Text whose delimiter changes from one request to the next, the structured page
    when asked for, and kube's 406 for anything else."""
    page = admin.get(server.url + "/statusz")
    assert (page.status_code, page.headers["Content-Type"]) == (200, "text/plain; charset=utf-8")
    lines = page.text.split("\n")
    assert lines[:3] == ["", "apiserver statusz", lines[2]] and lines[2].startswith("Warning: ")
    assert [line.split(maxsplit=1)[0].rstrip(":=") for line in lines[4:9]] == [
        "Started",
        "Up",
        "Go",
        "Binary",
        "Emulation",
    ]
    assert lines[9].endswith(" /flagz /healthz /livez /metrics /readyz /statusz /version")
    kind = "application/json;v=v1beta1;g=config.platform.io;as=Statusz"
    doc = admin.get(server.url + "/statusz", headers={"Accept": kind})
    assert (
        doc.headers["Content-Type"] == "application/json;g=config.platform.io;v=v1beta1;as=Statusz"
    )
    assert doc.json()["kind"] == "Statusz" and doc.json()["emulationVersion"] == "1.36"
    assert doc.json()["paths"] == [
        "/flagz",
        "/healthz",
        "/livez",
        "/metrics",
        "/readyz",
        "/statusz",
        "/version",
    ]
    refused = admin.get(server.url + "/statusz", headers={"Accept": "application/json"})
    assert (refused.status_code, refused.json()["reason"]) == (406, "NotAcceptable")


def test_flagz_as_kube_serves_it(server: Server, admin: requests.Session) -> None:
    """Every flag, given or not, in pflag's form; one delimiter for the process's life (kube
    caches the page); the structured page, its deprecated version with kube's warning."""
    page = admin.get(server.url + "/flagz")
    assert (page.status_code, page.headers["Content-Type"]) == (200, "text/plain; charset=utf-8")
    lines = page.text.split("\n")
    assert lines[:3] == ["", "apiserver flagz", lines[2]] and lines[2].startswith("Warning: ")
    delimiter = lines[3].removeprefix("admission-control").removesuffix("[]")
    assert delimiter in (":", ": ", "=", " ")
    assert admin.get(server.url + "/flagz").text == page.text
    shown = dict(line.split(delimiter, 1) for line in lines[3:] if line)
    assert (shown["secure-port"], shown["data-dir"]) == ("0", str(server.data_dir))  # as given
    assert shown["tls-cert-file"] == f"{server.data_dir}/pki/apiserver.crt"  # its own, completed
    assert shown["watch-cache-sizes"] == "[events#0,events.events.k8s.io#0]"  # kube's, completed
    assert (shown["storage-media-type"], shown["allow-privileged"]) == (  # this server's
        "application/vnd.platform.protobuf",
        "true",
    )
    assert len(shown) == 196  # kube-apiserver's 178 flags, and this server's 18 more
    kind = "application/json;g=config.platform.io;v=v1alpha1;as=Flagz"
    doc = admin.get(server.url + "/flagz", headers={"Accept": kind})
    assert (doc.headers["Content-Type"], doc.headers["Warning"]) == (
        kind,
        '299 - "This version of the flagz endpoint is deprecated. Please use a newer version."',
    )
    assert doc.json() == {
        "kind": "Flagz",
        "apiVersion": "config.platform.io/v1alpha1",
        "metadata": {"name": "apiserver"},
        "flags": shown,
    }
    beta = admin.get(server.url + "/flagz", headers={"Accept": kind.replace("v1alpha1", "v1beta1")})
    assert "Warning" not in beta.headers and beta.json()["flags"] == shown
    refused = admin.get(server.url + "/flagz", headers={"Accept": kind.replace("json", "cbor")})
    assert (refused.status_code, refused.json()["message"]) == (
        406,
        "only the following media types are accepted: application/json, application/yaml, "
        "text/plain",
    )


def test_openapi_documents_are_revalidated_as_kube_serves_them(
    server: Server, admin: requests.Session
) -> None:
    """ETag and Last-Modified on the documents, a 304 to a client whose copy is current
    (kubectl's HTTP cache asks so), and byte ranges, as Go's http.ServeContent answers."""
    for path in ("/openapi/v2", "/openapi/v3/apis/apps/v1"):
        whole = admin.get(server.url + path)
        assert (whole.status_code, whole.headers["Accept-Ranges"]) == (200, "bytes")
        etag, modified = whole.headers["ETag"], whole.headers["Last-Modified"]
        again = admin.get(server.url + path, headers={"If-None-Match": etag})
        assert (again.status_code, again.content, again.headers["ETag"]) == (304, b"", etag)
        assert "Content-Type" not in again.headers and "Last-Modified" not in again.headers
        since = admin.get(server.url + path, headers={"If-Modified-Since": modified})
        assert since.status_code == 304
        part = admin.get(server.url + path, headers={"Range": "bytes=0-9"})
        assert (part.status_code, part.content) == (206, whole.content[:10])
        assert part.headers["Content-Range"] == f"bytes 0-9/{len(whole.content)}"
    gzipped = {"Accept-Encoding": "gzip"}  # kube compresses v2, never a v3 document
    v2 = admin.get(server.url + "/openapi/v2", headers=gzipped, stream=True)
    assert (v2.headers["Content-Encoding"], v2.headers["Vary"]) == (
        "gzip",
        "Accept-Encoding, Accept",
    )
    v3 = admin.get(server.url + "/openapi/v3/apis/apps/v1", headers=gzipped, stream=True)
    assert "Content-Encoding" not in v3.headers and v3.headers["Vary"] == "Accept"
    index = admin.get(server.url + "/openapi/v3")
    assert "ETag" not in index.headers  # kube's index has a date only
    since = {"If-Modified-Since": index.headers["Last-Modified"]}
    assert admin.get(server.url + "/openapi/v3", headers=since).status_code == 304
    past = admin.get(server.url + "/openapi/v3", headers={"Range": "bytes=99999999-"})
    assert (past.status_code, past.text) == (416, "invalid range: failed to overlap\n")
