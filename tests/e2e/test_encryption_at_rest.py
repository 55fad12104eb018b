"""Encryption at rest with real servers, kubectl and (for KMS v2) the sample plugin process."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .answers import status
from .conftest import Server, kubectl_available, registry_prefix, session_for, start_server
from .stored import stored

pytestmark = pytest.mark.skipif(not kubectl_available(), reason="kubectl not installed")
ROOT = Path(__file__).resolve().parents[2]
KUBECTL = str(Path(sys.executable).parent / "kubectl")
PLAINTEXT = (b"hunter2", base64.b64encode(b"hunter2"))


def config(path: Path, *providers: dict[str, Any]) -> str:
    doc = {
        "apiVersion": "apiserver.config.platform.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [{"resources": ["secrets"], "providers": list(providers)}],
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def aescbc(*names: str, secrets: dict[str, str]) -> dict[str, Any]:
    for name in names:
        secrets.setdefault(name, base64.b64encode(os.urandom(32)).decode())
    return {"aescbc": {"keys": [{"name": n, "secret": secrets[n]} for n in names]}}


def raw(data_dir: Path, name: str = "db") -> tuple[bytes | None, list[bytes]]:
    """A Secret's value at rest in ``default`` and the earlier values the storage holds."""
    return stored(data_dir, "secrets", "default", name)


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def password(server: Server) -> str:
    out = server.kubectl("get", "secret", "db", "-o", "jsonpath={.data.password}").stdout
    return base64.b64decode(out).decode()


@pytest.mark.slow
def test_aescbc_rotation_reload_and_rewrite(tmp_path: Path) -> None:
    secrets: dict[str, str] = {}
    path = config(tmp_path / "enc.yaml", aescbc("key1", secrets=secrets))
    data_dir = tmp_path / "data"
    server = start_server(
        data_dir,
        f"--encryption-provider-config={path}",
        "--encryption-provider-config-automatic-reload",
    )
    try:
        server.kubectl("create", "secret", "generic", "db", "--from-literal=password=hunter2")
        value, log = raw(data_dir)
        assert value is not None and value.startswith(b"k8s:enc:aescbc:v1:key1:")
        assert not any(p in r for r in [value, *log] for p in PLAINTEXT)
        assert password(server) == "hunter2"
        # Rotate: a new first key (reloaded), the old one still reads.
        config(tmp_path / "enc.yaml", aescbc("key2", "key1", secrets=secrets))

        def new_key_writes() -> bool:
            server.kubectl("create", "secret", "generic", "probe", "--from-literal=a=b")
            probe, _ = raw(data_dir, "probe")
            server.kubectl("delete", "secret", "probe")
            return probe is not None and probe.startswith(b"k8s:enc:aescbc:v1:key2:")

        wait_for(new_key_writes)
        assert password(server) == "hunter2"
        assert raw(data_dir)[0].startswith(b"k8s:enc:aescbc:v1:key1:")  # type: ignore[union-attr]
        # The migration (scripts/rewrite-secrets): read everything, replace it unchanged.
        env = {**os.environ, "KUBECTL": KUBECTL, "KUBECONFIG": str(server.kubeconfig)}
        rewrite = subprocess.run(
            [str(ROOT / "scripts" / "rewrite-secrets")],
            check=False,
            env=env,
            capture_output=True,
            text=True,
        )
        assert (rewrite.returncode, rewrite.stdout) == (0, "secret/db replaced\n"), rewrite.stderr
        assert raw(data_dir)[0].startswith(b"k8s:enc:aescbc:v1:key2:")  # type: ignore[union-attr]
        # The old key can go.
        config(tmp_path / "enc.yaml", aescbc("key2", secrets=secrets))
        time.sleep(2.5)  # a reload poll or two
        assert password(server) == "hunter2"
        admin = session_for(server, cert=server.admin_cert)
        ready = admin.get(server.url + "/readyz/kms-providers")
        assert (ready.status_code, ready.text) == (200, "ok")
        verbose = admin.get(server.url + "/readyz?verbose").text
        assert "[+]kms-providers ok" in verbose
        assert "[+]kms-providers ok" in admin.get(server.url + "/healthz?verbose").text
        assert "kms-providers" not in admin.get(server.url + "/livez?verbose").text
        metrics = admin.get(server.url + "/metrics").text
        assert (
            'apiserver_storage_transformation_operations_total{resource="secrets",'
            'status="OK",transformation_type="to_storage",'
            'transformer_prefix="k8s:enc:aescbc:v1:"}'
        ) in metrics
    finally:
        server.stop()


@pytest.fixture
def kms_plugin(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    socket = str(tmp_path / "kms.sock")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "webhooks.kms",
            "--socket",
            socket,
            "--key-file",
            str(tmp_path / "kek"),
            "--generate-key",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: os.path.exists(socket), timeout=20)
        yield socket, process
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
def test_kms_v2_with_sample_plugin(
    tmp_path: Path, kms_plugin: tuple[str, subprocess.Popen[bytes]]
) -> None:
    socket, plugin = kms_plugin
    kms = {"apiVersion": "v2", "name": "local", "endpoint": f"unix://{socket}"}
    path = config(tmp_path / "enc.yaml", {"kms": kms})
    data_dir = tmp_path / "data"
    server = start_server(data_dir, f"--encryption-provider-config={path}")
    try:
        server.kubectl("create", "secret", "generic", "db", "--from-literal=password=hunter2")
        value, log = raw(data_dir)
        assert value is not None and value.startswith(b"k8s:enc:kms:v2:local:")
        assert not any(p in r for r in [value, *log] for p in PLAINTEXT)
        assert password(server) == "hunter2"
        admin = session_for(server, cert=server.admin_cert)
        ready = admin.get(server.url + "/readyz/kms-providers")
        assert (ready.status_code, ready.text) == (200, "ok")
    finally:
        server.stop()
    # A restart writes with a new seed and reads the old one through the plugin.  One
    # process: each worker decrypts (and caches) a seed on its own, as each kube replica.
    server = start_server(data_dir, f"--encryption-provider-config={path}", "--workers=1")
    try:
        assert password(server) == "hunter2"
        # The plugin goes away: the next probe (after kube's 20 s healthz TTL) says so.
        plugin.terminate()
        plugin.wait(timeout=10)
        admin = session_for(server, cert=server.admin_cert)

        def unready() -> bool:
            return admin.get(server.url + "/readyz/kms-providers").status_code != 200

        wait_for(unready, timeout=40)
        verbose = admin.get(server.url + "/readyz?verbose")
        assert "[-]kms-providers failed: reason withheld" in verbose.text
        assert password(server) == "hunter2"  # reads need no plugin: the seed is cached
    finally:
        server.stop()


def test_bad_config_exits_with_one_line(tmp_path: Path) -> None:
    bad = {"aescbc": {"keys": [{"name": "k", "secret": base64.b64encode(b"short").decode()}]}}
    path = config(tmp_path / "enc.yaml", bad)
    twistd = str(Path(sys.executable).parent / "twistd")
    result = subprocess.run(
        [twistd, "-n", "platform-apiserver", f"--encryption-provider-config={path}"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: "
        'Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one '
        "of [16 24 32]"
    )


@pytest.mark.slow
def test_plaintext_without_identity_is_kubes_error(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server = start_server(data_dir)
    try:
        server.kubectl("create", "secret", "generic", "db", "--from-literal=password=hunter2")
    finally:
        server.stop()
    path = config(tmp_path / "enc.yaml", aescbc("key1", secrets={}))
    unsafe = "--feature-gates=AllowUnsafeMalformedObjectDeletion=true"
    server = start_server(data_dir, f"--encryption-provider-config={path}", unsafe)
    try:
        admin = session_for(server, cert=server.admin_cert)
        url = server.url + "/api/v1/namespaces/default/secrets"
        # kube-apiserver v1.36 with AllowUnsafeMalformedObjectDeletion: a corrupt object.
        why = "data from the storage is not transformable revision=0: no matching prefix found"
        text = (
            "StorageError: corrupt object, Code: 7, Key: /secrets/default/db, "
            f"ResourceVersion: 0, AdditionalErrorMsg: {why}"
        )
        internal = status(
            500,
            "InternalError",
            f"Internal error occurred: {text}",
            {"causes": [{"message": text}]},
        )
        for verb in (admin.get, admin.delete):  # a plain delete reads what it deletes
            got = verb(url + "/db")
            assert (got.status_code, got.json()) == (500, internal)
        got = admin.patch(url + "/db", json={"data": {}}, headers=MERGE)
        patched = status(
            500, "InternalError", f"Internal error occurred: {why}", {"causes": [{"message": why}]}
        )
        assert (got.status_code, got.json()) == (500, patched)
        listed = admin.get(url)
        key = f"{registry_prefix(data_dir)}/secrets/default/db"
        cause = {
            "reason": "UnexpectedServerResponse",
            "message": text.replace("/secrets/default/db", key),
            "field": key,
        }
        details = {"name": "list", "kind": "secrets", "causes": [cause]}
        message = "failed to read one or more secrets from the storage"
        assert (listed.status_code, listed.json()) == (
            500,
            status(500, "StorageReadError", message, details),
        )
        _unsafe_delete_is_seen_as_its_stand_in(admin, url)
    finally:
        server.stop()


MERGE = {"Content-Type": "application/merge-patch+json"}


def _unsafe_delete_is_seen_as_its_stand_in(admin: Any, url: str) -> None:
    """kube's AllowUnsafeMalformedObjectDeletion: the value goes, watchers see a DELETED
    object with only its name."""
    start = admin.get(url.replace("/secrets", "/configmaps")).json()["metadata"]
    params = {"watch": "1", "resourceVersion": start["resourceVersion"], "timeoutSeconds": "10"}
    with admin.get(url, params=params, stream=True) as watch:
        assert watch.status_code == 200
        params = {"ignoreStoreReadErrorWithClusterBreakingPotential": "true"}
        r = admin.delete(url + "/db", params=params)
        assert (r.status_code, r.json()["details"]) == (
            200,
            {"name": "db", "kind": "secrets", "uid": ""},
        )
        assert admin.post(url, json={"metadata": {"name": "after"}}).status_code == 201
        lines = watch.iter_lines()
        seen = [json.loads(next(lines)) for _ in range(2)]
    deleted = seen[0]["object"]["metadata"]
    assert deleted.pop("resourceVersion").isdigit()  # the deletion's
    assert (seen[0]["type"], deleted) == ("DELETED", {"name": "db", "namespace": "default"})
    assert (seen[1]["type"], seen[1]["object"]["metadata"]["name"]) == ("ADDED", "after")
    assert admin.get(url + "/db").status_code == 404
    assert [i["metadata"]["name"] for i in admin.get(url).json()["items"]] == ["after"]
