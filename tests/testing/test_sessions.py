"""Whole pytest sessions that use the plugin, run in a child pytest: under pytest-xdist, with
extra server flags, and pointed at a server that is already running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from platform_api.testing import ApiServer

pytestmark = pytest.mark.e2e

# Each test records which server and namespace it saw, then uses them through a client.
INNER_TESTS = """
import json, os, pytest

@pytest.mark.parametrize("n", range(4))
def test_configmap(platform_apiserver, platform_namespace, n):
    from kubernetes import client
    with platform_apiserver.kubernetes_client() as api:
        core = client.CoreV1Api(api)
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"), data={"n": str(n)})
        core.create_namespaced_config_map(platform_namespace, body)
        assert core.read_namespaced_config_map("cm", platform_namespace).data == {"n": str(n)}
    status, review = platform_apiserver.request(
        "POST",
        "/apis/authentication.platform.io/v1/tokenreviews",
        {"apiVersion": "authentication.platform.io/v1", "kind": "TokenReview",
         "spec": {"token": "t0ken"}},
    )
    seen = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER", ""),
        "url": platform_apiserver.base_url,
        "owned": platform_apiserver.process is not None,
        "namespace": platform_namespace,
        "token_user": review["status"].get("user", {}).get("username", ""),
    }
    with open(os.environ["SEEN_FILE"], "a") as f:
        f.write(json.dumps(seen) + "\\n")
"""


def run_pytest(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    seen = tmp_path / "seen.jsonl"
    environ = {**os.environ, "SEEN_FILE": str(seen), **(env or {})}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_inner.py"]
    result = subprocess.run(
        cmd, check=False, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120
    )
    records = [json.loads(line) for line in seen.read_text().splitlines()] if seen.exists() else []
    return result, records


def test_each_xdist_worker_starts_its_own_server_with_the_extra_flags(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("t0ken,tess,uid-1\n")
    result, seen = run_pytest(
        tmp_path, "-n", "2", f"--platform-apiserver-arg=--token-auth-file={tokens}"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
    urls: dict[str, set[str]] = {}
    for record in seen:
        urls.setdefault(record["worker"], set()).add(record["url"])
    assert sorted(r["worker"] for r in seen) == ["gw0", "gw0", "gw1", "gw1"]
    assert len(urls["gw0"]) == len(urls["gw1"]) == 1 and urls["gw0"] != urls["gw1"]
    assert len({r["namespace"] for r in seen}) == 4
    assert all(r["owned"] and r["token_user"] == "tess" for r in seen)


def test_a_running_server_named_by_the_environment(
    platform_apiserver: ApiServer, tmp_path: Path
) -> None:
    env = {"PLATFORM_APISERVER_KUBECONFIG": str(platform_apiserver.kubeconfig)}
    result, seen = run_pytest(tmp_path, "-k", "configmap and 0", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [(r["url"], r["owned"], r["token_user"]) for r in seen] == [
        (platform_apiserver.base_url, False, "")
    ]
    status, namespace = platform_apiserver.request(
        "GET", f"/api/v1/namespaces/{seen[0]['namespace']}"
    )
    assert status == 404 or namespace["status"]["phase"] == "Terminating"


def test_extra_flags_do_not_apply_to_a_running_server(tmp_path: Path) -> None:
    env = {"PLATFORM_APISERVER_KUBECONFIG": str(tmp_path / "any.kubeconfig")}
    result, seen = run_pytest(tmp_path, "--platform-apiserver-arg=--v=2", env=env)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.strip() == (
        "ERROR: --platform-apiserver-arg does not apply to a server that is already running"
    )
    assert seen == []
