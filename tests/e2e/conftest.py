"""Start real ``twistd platform-apiserver`` processes for end-to-end tests."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests
import urllib3

from platform_api.testing import ApiServer
from tests.storage.etcd_server import EtcdServer, start_etcd

if TYPE_CHECKING:
    from tests.e2e.auditing import Setup

urllib3.disable_warnings()
VENV_BIN = Path(sys.executable).parent


class Server(ApiServer):
    """The plugin's server, with the short name these tests use for its URL."""

    @property
    def url(self) -> str:
        return self.base_url


# The root-CA publisher puts a ConfigMap in every namespace; tests of lists and watches
# count exactly what they wrote, so servers run without it unless a test names its
# controllers (tests/e2e/test_bootstrap_controllers.py covers the publisher).
QUIET_CONTROLLERS = "--controllers=*,-root-ca-certificate-publisher-controller"


# PLATFORM_E2E_ETCD=<client URL>: the run's servers on that etcd, each under a prefix of
# its own (kept across its restarts), to run the end-to-end cases on the etcd backend;
# =own: on an etcd each pytest process starts when its first server needs one (scripts/test
# runs the modules marked etcd_rerun so).
_ETCD_GIVEN = os.environ.get("PLATFORM_E2E_ETCD", "")
E2E_ETCD = bool(_ETCD_GIVEN)
_own_etcd: list[EtcdServer] = []


def e2e_etcd() -> str:
    """The client URL of the run's etcd (PLATFORM_E2E_ETCD), started here if it is ours."""
    if _ETCD_GIVEN != "own":
        return _ETCD_GIVEN
    if not _own_etcd:
        _own_etcd.append(start_etcd(fsync=False))
        atexit.register(_own_etcd[0].stop)
    return _own_etcd[0].endpoint


# PLATFORM_E2E_WORKERS=<n>: the run's servers with --workers n (unless a test names its
# own), to run the end-to-end cases against worker processes (scripts/run's default).
E2E_WORKERS = os.environ.get("PLATFORM_E2E_WORKERS", "")


# Cases about LMDB itself (its files, its writer process, its faults) name it, so that a
# PLATFORM_E2E_ETCD run keeps them on LMDB.
ON_LMDB = "--storage-backend=lmdb"


def registry_prefix(data_dir: Path) -> str:
    """The key prefix kube's words name for a server on ``data_dir`` (``Key: /registry/...``
    in storage errors): under PLATFORM_E2E_ETCD, the server's own etcd prefix."""
    if not E2E_ETCD:
        return "/registry"
    return "/e2e-" + hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]


def start_server(data_dir: Path, *args: str, timeout: float = 30.0) -> Server:
    if not any(a.startswith("--controllers") for a in args):
        args = (*args, QUIET_CONTROLLERS)
    if E2E_ETCD and not any(a.startswith("--storage-backend") for a in args):
        args = (*args, "--storage-backend=etcd3", f"--etcd-servers={e2e_etcd()}")
        args = (*args, f"--etcd-prefix={registry_prefix(data_dir)}")
    if E2E_WORKERS and not any(a.startswith("--workers") for a in args):
        args = (*args, f"--workers={E2E_WORKERS}")
    return Server.start(data_dir, *args, timeout=timeout)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("apiserver"))
    yield running
    running.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own (for tests that restart or reconfigure it)."""
    running = start_server(tmp_path / "data")
    yield running
    running.stop()


@pytest.fixture
def admin(server: Server) -> requests.Session:
    return session_for(server, cert=server.admin_cert)


@pytest.fixture
def api(server: Server) -> Iterator[Any]:
    """The ``kubernetes`` client, admin, on the shared server."""
    from kubernetes import config  # the typed client loads slowly: only where used

    client = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield client
    client.close()


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """A module's audited server (tests/e2e/auditing.py: POLICY, a webhook sink, RBAC)."""
    from tests.e2e.auditing import audited_server

    setup = audited_server(tmp_path_factory.mktemp("audit"))
    yield setup
    setup.stop()


def session_for(
    server: Server, cert: tuple[str, str] | None = None, token: str = ""
) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # REQUESTS_CA_BUNDLE would otherwise override ``verify``
    session.verify = server.ca
    session.cert = cert
    if token:
        session.headers["Authorization"] = f"Bearer {token}"
    return session


# Servers on a real etcd (the etcd/replica end-to-end tests): one etcd per test module,
# replicas sharing it and the first one's PKI.
@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    server = start_etcd(str(tmp_path_factory.mktemp("etcd")), fsync=False)
    yield server
    server.stop()


def replica(root: Path, etcd: EtcdServer, *extra: str) -> Server:
    """A server on ``etcd``; replicas share the first one's PKI (one CA, one token key)."""
    shared = root.parent / "replica-0" / "pki"
    args = ["--storage-backend", "etcd3", "--etcd-servers", etcd.endpoint, *extra]
    if root.name != "replica-0":
        args += ["--cert-dir", str(shared)]
    return start_server(root, *args)


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, etcd: EtcdServer) -> Iterator[list[Server]]:
    base = tmp_path_factory.mktemp("replicas")
    running = [replica(base / "replica-0", etcd)]
    running.append(replica(base / "replica-1", etcd))
    yield running
    for server in running:
        server.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


def kubectl_available() -> bool:
    return shutil.which("kubectl", path=str(VENV_BIN)) is not None


os.environ.setdefault("KUBECTL_EXTERNAL_DIFF", "diff")
# kubectl caches discovery for 6 hours under ~/.kube/cache by host:port; ports are reused
# by later servers (of this run or an earlier one), so each run gets its own cache, and
# Server.kubectl one per server.
os.environ["KUBECACHEDIR"] = tempfile.mkdtemp(prefix="kubectl-cache-")
atexit.register(shutil.rmtree, os.environ["KUBECACHEDIR"], True)
