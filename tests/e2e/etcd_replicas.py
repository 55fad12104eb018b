"""What the etcd end-to-end tests ask of a server on etcd and of etcd itself (the
fixtures, ``etcd`` and ``replicas``, are in conftest.py)."""

from __future__ import annotations

import os
import subprocess

import requests

from tests.e2e.conftest import Server, session_for
from tests.storage.etcd_server import EtcdServer, etcd_binary


def admin(replicas: list[Server]) -> requests.Session:
    return session_for(replicas[0], cert=replicas[0].admin_cert)


def etcdctl(etcd: EtcdServer, *args: str) -> str:
    tool = os.path.join(os.path.dirname(etcd_binary()), "etcdctl")
    done = subprocess.run(
        [tool, "--endpoints", etcd.endpoint, *args], capture_output=True, check=True, timeout=10
    )
    return done.stdout.decode()


def holder(session: requests.Session, server: Server) -> str:
    path = "/apis/coordination.platform.io/v1/namespaces/platform-system/leases"
    lease = session.get(f"{server.base_url}{path}/platform-controller-manager")
    return str(lease.json()["spec"].get("holderIdentity") or "") if lease.ok else ""
