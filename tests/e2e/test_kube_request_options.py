"""Request paths and options answered as kube-apiserver v1.36 answers them (reference):
dry runs, list options, patch refusals and path segments the store sees."""

from __future__ import annotations

import http.client
import json
import ssl

import pytest
import requests

from platform_api.codec.protobuf import SCHEME
from tests.e2e.conftest import Server
from tests.e2e.test_http import CM, configmap, status


@pytest.mark.parametrize("query", ["?dryRun", "?dryRun=", "?dryRun=All&dryRun="])
@pytest.mark.parametrize(
    ("method", "suffix", "options"),
    [
        ("POST", "", "CreateOptions"),
        ("PUT", "/bare-dry-run", "UpdateOptions"),
        ("PATCH", "/bare-dry-run", "PatchOptions"),
        ("DELETE", "/bare-dry-run", "DeleteOptions"),
        ("DELETE", "", "DeleteOptions"),
    ],
)
def test_a_bare_dry_run_is_refused_not_written(
    server: Server, admin: requests.Session, query: str, method: str, suffix: str, options: str
) -> None:
    """kube's ValidateDryRun reads ``?dryRun`` as the value "" and refuses it, before the
    body's name or the object's existence (reference, 2026-12-06); nothing is written."""
    url = server.url + CM
    admin.post(url, json=configmap("bare-dry-run"))
    body = configmap("other-name") if method in ("POST", "PUT") else {}
    if method == "DELETE":  # with no body: a DELETE's body would be its options instead
        body = None
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    r = admin.request(method, url + suffix + query, json=body, headers=headers)
    values = json.dumps(query.replace("?dryRun", "").split("&dryRun=")[1:] or [""])
    values = '["All",""]' if query.endswith("All&dryRun=") else values
    assert r.status_code == 422
    assert r.json() == status(
        422,
        "Invalid",
        f'{options}.meta.platform.io "" is invalid: dryRun: Unsupported value: {values}: '
        'supported values: "All"',
        {"group": "meta.platform.io", "kind": options, "causes": [
            {"reason": "FieldValueNotSupported", "message": f'Unsupported value: {values}: '
             'supported values: "All"', "field": "dryRun"}]},
    )  # fmt: skip
    assert admin.get(url + "/other-name").status_code == 404
    assert admin.get(url + "/bare-dry-run").json()["metadata"].get("deletionTimestamp") is None


@pytest.mark.parametrize(
    ("query", "code", "message"),
    [
        # kube converts the query field by field (timeoutSeconds before limit), takes an
        # empty number for none it can parse, validates, then checks field labels
        ("limit=", 400, 'strconv.ParseInt: parsing "": invalid syntax'),
        ("limit=&limit=1", 400, 'strconv.ParseInt: parsing "": invalid syntax'),
        ("timeoutSeconds=", 400, 'strconv.ParseInt: parsing "": invalid syntax'),
        ("limit=0x10&timeoutSeconds=1.5", 400, 'strconv.ParseInt: parsing "1.5": invalid syntax'),
        # the selectors are parsed after the numbers, label before field (2026-12-07)
        ("labelSelector=%2C&limit=y", 400, 'strconv.ParseInt: parsing "y": invalid syntax'),
        (
            "fieldSelector=a~b&timeoutSeconds=x",
            400,
            'strconv.ParseInt: parsing "x": invalid syntax',
        ),
        (
            "labelSelector=%2C&fieldSelector=a~b",
            400,
            "found ',', expected: !, identifier, or 'end of string'",
        ),
        (
            "fieldSelector=x%3Dy&resourceVersionMatch=NotOlderThan",
            422,
            'ListOptions.meta.platform.io "" is invalid: resourceVersionMatch: Forbidden: '
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
    ],
)
def test_list_options_refused_in_kubes_order(
    server: Server, admin: requests.Session, query: str, code: int, message: str
) -> None:
    """As kube-apiserver v1.36 answered each (reference, 2026-12-06)."""
    r = admin.get(f"{server.url}{CM}?{query}")
    assert (r.status_code, r.json()["message"]) == (code, message)


def test_a_json_patch_refusal_quotes_what_its_pointers_passed_through_sorted(
    server: Server, admin: requests.Session
) -> None:
    """json-patch writes the objects its pointers passed through (a ``from`` too) as Go
    maps, sorted; kube quotes that document when the result is of no known type."""
    url = f"{server.url}{CM}/copied-kind"
    admin.post(server.url + CM, json=configmap("copied-kind", k="v"))
    stored = admin.get(url).json()
    patch = [{"op": "copy", "path": "/kind", "from": "/metadata/name"}]
    r = admin.patch(url, json=patch, headers={"Content-Type": "application/json-patch+json"})
    shown = {**stored, "kind": "copied-kind", "metadata": dict(sorted(stored["metadata"].items()))}
    text = json.dumps(dict(sorted(shown.items())), separators=(",", ":"))
    assert r.status_code == 422
    assert r.json()["message"] == (
        f' "" is invalid: patch: Invalid value: {json.dumps(text)}: no kind "copied-kind" is '
        f'registered for version "v1" in scheme "{SCHEME}"'
    )


@pytest.mark.parametrize(
    ("method", "path", "code", "reason", "message"),
    [
        # kube's etcd3 store refuses a key with a "." or ".." segment (a plain 500)
        ("GET", "/api/v1/namespaces/./configmaps/x", 500, "", 'invalid key: "/configmaps/./x"'),
        ("GET", "/api/v1/namespaces/../configmaps", 500, "", 'invalid key: "/configmaps/.."'),
        ("GET", "/api/v1/namespaces/%2e/services/x", 500, "", 'invalid key: "/services/specs/./x"'),
        # its key function wants a namespace; the handler's Namer a name
        ("GET", "/api/v1/namespaces//configmaps/x", 400, "BadRequest", "Namespace parameter required."),
        ("GET", "/api/v1/namespaces/default/pods//status", 400, "BadRequest", "name must be provided"),
        ("PUT", "/api/v1/namespaces//finalize", 400, "BadRequest", "name must be provided"),
        # a create's namespace lookup is client-go's GET, which refuses the name
        ("POST", "/api/v1/namespaces/./configmaps", 500, "InternalError",
         "Internal error occurred: invalid resource name \".\": [may not be '.']"),
    ],
)  # fmt: skip
def test_paths_with_empty_or_dot_segments(
    server: Server,
    method: str,
    path: str,
    code: int,
    reason: str,
    message: str,
) -> None:
    """As kube-apiserver v1.36 answered each (reference, 2026-12-06); sent as written
    (an HTTP library would take the dot segments out)."""
    context = ssl.create_default_context(cafile=server.ca)
    context.load_cert_chain(*server.admin_cert)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context)
    body = json.dumps(configmap("x")) if method in ("PUT", "POST") else None
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
    answer = json.loads(conn.getresponse().read())
    conn.close()
    assert (answer["code"], answer.get("reason", ""), answer["message"]) == (code, reason, message)


def test_a_collection_delete_without_a_namespace_deletes_nothing(
    server: Server, admin: requests.Session
) -> None:
    """``/namespaces//configmaps`` lists every namespace's; kube deletes in the request's
    (empty) namespace and is refused at the first, so nothing goes (reference)."""
    admin.post(server.url + CM, json=configmap("not-a-victim"))
    r = admin.delete(f"{server.url}/api/v1/namespaces//configmaps")
    assert (r.status_code, r.json()["message"]) == (400, "Namespace parameter required.")
    assert admin.get(f"{server.url}{CM}/not-a-victim").status_code == 200
