"""Capture what a real kube-apiserver writes, as JSON and as Protobuf, for the codec tests.

Usage: python tests/codec/kube/capture.py <base URL> <bearer token>
(against ``/work/shared/tools/reference-apiserver start``; writes ``<name>.json`` and
``<name>.pb`` beside this file).  Each object is created, then read twice at the same
resourceVersion: once with ``Accept: application/json``, once as Protobuf.  Names carry
kube's ``k8s.io`` groups: the fixtures are kube's bytes, untouched.
"""

from __future__ import annotations

import json
import pathlib
import ssl
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
PB = "application/vnd.kubernetes.protobuf"
NS = "codec"
OBJECTS = HERE / "objects.json"

_ctx = ssl.create_default_context()
_ctx.check_hostname = False
_ctx.verify_mode = ssl.CERT_NONE


def call(
    base: str, token: str, method: str, path: str, body: Any = None, accept: str = ""
) -> bytes:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("User-Agent", "codec-fixtures")  # not curl: kube would indent
    request.add_header("Accept", accept or "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, context=_ctx) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        return e.read()


def save(name: str, as_json: bytes, as_pb: bytes) -> None:
    (HERE / f"{name}.json").write_bytes(as_json.rstrip(b"\n") + b"\n")
    (HERE / f"{name}.pb").write_bytes(as_pb)
    print(name, len(as_json), len(as_pb))


def main(base: str, token: str) -> None:
    objects = json.loads(OBJECTS.read_text())
    call(base, token, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    for item in objects["create"]:
        call(base, token, "POST", item["collection"], item["object"])
    time.sleep(1)
    for name, where in objects["read"].items():
        path, accept = where if isinstance(where, list) else (where, "")
        as_json = call(base, token, "GET", path, accept="application/json" + accept)
        save(name, as_json, call(base, token, "GET", path, accept=PB + accept))
    for name, item in objects["review"].items():
        as_json = call(base, token, "POST", item["collection"], item["object"])
        as_pb = call(base, token, "POST", item["collection"], item["object"], accept=PB)
        save(name, as_json, as_pb)
    capture_watches(base, token)


def capture_watches(base: str, token: str) -> None:
    """A watch stream that sees a ConfigMap come and go (run the server with
    ``--watch-cache=false``: the reference's etcd lacks progress notifications)."""
    collection = f"/api/v1/namespaces/{NS}/configmaps"
    path = f"{collection}?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=2"
    with ThreadPoolExecutor(1) as pool:
        stream = pool.submit(call, base, token, "GET", path, None, f"{PB};stream=watch")
        time.sleep(1)
        call(base, token, "POST", collection, {"metadata": {"name": "watched"}})
        call(base, token, "DELETE", f"{collection}/watched")
        (HERE / "watch-configmaps.pb").write_bytes(stream.result())
    print("watch-configmaps", len(stream.result()))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
