"""The floor under every request: bare twisted.web over the server's own TLS, no API.

    python benchmarks/floorbench.py [--reference KUBECONFIG] [--clients 8] [--requests 12000]

Answers every request with a fixed 201 and a ConfigMap-sized JSON body from a plain
``twisted.web`` resource on the server's TLS listener (``ServingOptions`` and its eager
TCP connections: what every API request goes through before any of this server's code),
and drives it with loadgen's 8 keep-alive client processes sending the same creates the
issue-13 figures send.  Prints req/s, the serving process's CPU per request (user and
system, from /proc), and the clients' own CPU per request; with ``--reference``, the same
create run against a kube-apiserver and the machine CPU it spent per create apart from
the clients'.  Says how much of a create's cost no API code can remove on this machine,
and so what rate the cores allow at best.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import loadgen

BODY = (
    b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-0-0","namespace":"bench",'
    b'"uid":"6c1b2f1e-4bb6-4bd4-9f39-2d1f0f7c6a0b","resourceVersion":"123456",'
    b'"creationTimestamp":"2026-12-04T21:00:00Z","managedFields":[{"manager":"python",'
    b'"operation":"Update","apiVersion":"v1","time":"2026-12-04T21:00:00Z","fieldsType":'
    b'"FieldsV1","fieldsV1":{"f:data":{".":{},"f:v":{}}}}]},"data":{"v":"' + b"x" * 120 + b'"}}\n'
)
TICK = os.sysconf("SC_CLK_TCK")


def _certificate(directory: Path) -> tuple[str, str]:
    """A self-signed serving certificate (the controller manager's), as two PEM files."""
    from OpenSSL.crypto import FILETYPE_PEM  # noqa: PLC0415

    from platform_api.controllermanager.health import self_signed  # noqa: PLC0415

    pair = self_signed()
    cert_file, key_file = directory / "floor.crt", directory / "floor.key"
    cert_file.write_bytes(pair.dump(FILETYPE_PEM))
    key_file.write_bytes(pair.privateKey.dump(FILETYPE_PEM))
    return str(cert_file), str(key_file)


def serve(cert_file: str, key_file: str, port_out: Any) -> None:
    """The floor server (a process of its own): TLS as the API server sets it up, a
    resource that answers 201 with ``BODY``."""
    from twisted.internet import reactor  # noqa: PLC0415
    from twisted.protocols.tls import TLSMemoryBIOFactory  # noqa: PLC0415
    from twisted.web import resource, server  # noqa: PLC0415

    from platform_api.apiserver.eagerwrite import listen_eager  # noqa: PLC0415
    from platform_api.apiserver.tls import serving_options  # noqa: PLC0415

    class Created(resource.Resource):
        isLeaf = True

        def render(self, request: Any) -> bytes:
            request.content.read()
            request.setResponseCode(201)
            request.setHeader(b"content-type", b"application/json")
            return BODY

    site = server.Site(Created())
    site.displayTracebacks = False
    options = serving_options(cert_file, key_file, [])
    tls = TLSMemoryBIOFactory(options, False, site)
    port = listen_eager(reactor, 0, tls, "127.0.0.1")
    port_out.put(port.getHost().port)
    reactor.run()


def cpu(pid: int) -> tuple[float, float]:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def run(target: loadgen.Target, clients: int, requests: int, pid: int | None) -> dict[str, float]:
    per = requests // clients
    names = [[f"floor-{c}-{i}" for i in range(per)] for c in range(clients)]
    before = cpu(pid) if pid else (0.0, 0.0)
    result = loadgen.run_parallel(target, "create", clients, per, names)
    after = cpu(pid) if pid else (0.0, 0.0)
    total = per * clients
    out = {"req/s": result.rate, "machine CPU ms/req apart from clients": result.server_cpu_ms}
    out["clients CPU ms/req"] = result.clients_cpu_ms
    if pid:
        out["server user ms/req"] = (after[0] - before[0]) * 1000 / total
        out["server system ms/req"] = (after[1] - before[1]) * 1000 / total
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reference", help="kubeconfig of a kube-apiserver to compare with")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=12000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        cert_file, key_file = _certificate(Path(tmp))
        port_out: Any = mp.Queue()
        proc = mp.Process(target=serve, args=(cert_file, key_file, port_out), daemon=True)
        proc.start()
        port = port_out.get(timeout=30)
        target = loadgen.Target("127.0.0.1", port, None, None, None, "x", insecure=True)
        time.sleep(0.2)
        try:
            rows = {"bare twisted.web + TLS": run(target, args.clients, args.requests, proc.pid)}
        finally:
            proc.terminate()
            proc.join()
    if args.reference:
        kube = loadgen.from_kubeconfig(args.reference)
        namespace = f"{loadgen.NAMESPACE}-floor"
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        loadgen.request(kube.connect(), kube, "POST", "/api/v1/namespaces", body)
        load_base = f"/api/v1/namespaces/{namespace}/configmaps"
        per = args.requests // args.clients
        names = [[f"floor-{c}-{i}" for i in range(per)] for c in range(args.clients)]
        result = loadgen.run_parallel(
            kube, "create", args.clients, per, names, loadgen.Workload(base=load_base)
        )
        rows["kube-apiserver create"] = {
            "req/s": result.rate,
            "machine CPU ms/req apart from clients": result.server_cpu_ms,
            "clients CPU ms/req": result.clients_cpu_ms,
        }
        loadgen.request(kube.connect(), kube, "DELETE", f"/api/v1/namespaces/{namespace}")
    for label, row in rows.items():
        print(label)
        for key, value in row.items():
            print(f"  {key:<40} {value:10.3f}")


if __name__ == "__main__":
    main()
