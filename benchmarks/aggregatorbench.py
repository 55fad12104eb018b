"""What proxying to an aggregated API server adds: sequential GET latency through this
server versus straight to the aggregated server, and 8-client GETs through the proxy.

    python benchmarks/aggregatorbench.py [--requests 500]

Starts this server (with a proxy client certificate) and the stand-in aggregated server
of the end-to-end tests (tests/e2e/aggregated_backend.py, Twisted, TLS), registers an
APIService through an ExternalName Service, and times GETs of one path both ways over
keep-alive connections.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).parent.parent))

from platform_api.apiserver import pki
from tests.e2e.conftest import session_for
from tests.e2e.crds import eventually
from tests.e2e.test_aggregator_proxy import (
    APISERVICES,
    GROUP,
    SERVICES,
    WIDGETS,
    apiservice,
    available,
    start_pair,
)


def timed(session: requests.Session, url: str, count: int) -> list[float]:
    session.get(url)
    out = []
    for _ in range(count):
        start = time.perf_counter()
        assert session.get(url).status_code == 200
        out.append((time.perf_counter() - start) * 1000)
    return sorted(out)


def parallel(make: object, url: str, clients: int, each: int) -> float:
    sessions = [make() for _ in range(clients)]  # type: ignore[operator]
    for s in sessions:
        s.get(url)
    threads = [
        threading.Thread(target=lambda s=s: [s.get(url) for _ in range(each)]) for s in sessions
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return clients * each / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server, backend = start_pair(root)
        try:
            admin = session_for(server, cert=server.admin_cert)
            external = {"type": "ExternalName", "externalName": "127.0.0.1"}
            admin.post(server.url + SERVICES, json={"metadata": {"name": "api"}, "spec": external})
            admin.post(
                server.url + APISERVICES, json=apiservice(GROUP, backend.port, backend.ca_bundle)
            )
            eventually(
                lambda: available(admin, server, f"v1alpha1.{GROUP}").get("status") == "True"
            )
            direct = requests.Session()
            direct.trust_env = False
            proxy = pki.Paths.under(str(root / "proxy"))  # start_pair's client certificate
            direct.cert = (proxy.serving_cert, proxy.serving_key)
            backend_url = f"https://127.0.0.1:{backend.port}{WIDGETS}"
            direct.verify = False  # its certificate names api.default.svc, not the address
            requests.packages.urllib3.disable_warnings()  # type: ignore[attr-defined]
            through = timed(admin, server.url + WIDGETS, args.requests)
            straight = timed(direct, backend_url, args.requests)
            n = len(through)
            print(
                f"sequential GET p50 / p99 ms: proxied {statistics.median(through):.2f} / "
                f"{through[int(n * 0.99) - 1]:.2f}, direct {statistics.median(straight):.2f} / "
                f"{straight[int(n * 0.99) - 1]:.2f}"
            )
            rate = parallel(
                lambda: session_for(server, cert=server.admin_cert),
                server.url + WIDGETS,
                8,
                args.requests // 4,
            )
            print(f"8 clients through the proxy: {rate:.0f} GET/s")
        finally:
            server.stop()
            backend.stop()


if __name__ == "__main__":
    main()
