"""ComponentStatus (core/v1, deprecated in v1.19): the control plane's health, probed live.

Nothing is stored: each get or list probes, as kube's componentstatus REST does.  The
scheduler and the controller-manager are asked ``GET https://127.0.0.1:<port>/healthz``
(10259, 10257; certificate not verified) and a process that does not answer shows as
kube shows it (Unhealthy, Go's error text); the storage is ``etcd-0``, healthy while
the database answers a read.
"""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable
from typing import Any

from twisted.internet import error as neterror
from twisted.web.client import ResponseNeverReceived

from platform_api.client.kubeconfig import Connection

Obj = dict[str, Any]
PROBE_TIMEOUT = 20.0  # kube's probeTimeOut
# The name, port and order kube answers with.
HTTP_COMPONENTS = (("scheduler", 10259), ("controller-manager", 10257))
STORAGE = "etcd-0"
NAMES = (*(name for name, _ in HTTP_COMPONENTS), STORAGE)


def status(name: str, healthy: bool | None, message: str, error: str = "") -> Obj:
    """A ComponentStatus with kube's single ``Healthy`` condition (None: Unknown)."""
    condition: Obj = {
        "type": "Healthy",
        "status": {True: "True", False: "False", None: "Unknown"}[healthy],
        "message": message,
    }
    if error:
        condition["error"] = error
    return {
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [condition],
    }


def _go_error(url: str, port: int, failure: BaseException) -> str:
    """net/http's error text for the probe's failure, as kube puts it in the message."""
    prefix = f'Get "{url}": '
    if isinstance(failure, neterror.ConnectionRefusedError):
        return f"{prefix}dial tcp 127.0.0.1:{port}: connect: connection refused"
    if isinstance(failure, neterror.TimeoutError | ResponseNeverReceived):
        return f"{prefix}context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    if isinstance(failure, OSError) and failure.errno == errno.ECONNREFUSED:
        return f"{prefix}dial tcp 127.0.0.1:{port}: connect: connection refused"
    return prefix + str(failure)


async def probe_http(reactor: Any, name: str, port: int) -> Obj:
    """kube's HTTP prober: 2xx healthy with the body as message, 3xx/4xx/5xx unhealthy."""
    url = f"https://127.0.0.1:{port}/healthz"
    client = Connection(server=url, insecure=True).client(reactor, keep_alive=0)
    try:
        response = await client.get(url, timeout=PROBE_TIMEOUT)
        body = (await response.content()).decode("utf-8", "replace")
    except Exception as e:
        return status(name, False, _go_error(url, port, e))
    code = response.code
    if 200 <= code < 300:
        return status(name, True, body)
    if 300 <= code < 400:
        return status(name, None, f"Probe terminated redirects, Response body: {body}")
    return status(name, False, f"HTTP probe failed with statuscode: {code}")


async def probe(
    name: str, reactor: Any, storage_check: Callable[[], Awaitable[None]]
) -> Obj | None:
    """The status of component ``name``, or None if there is no such component."""
    if name == STORAGE:
        try:
            await storage_check()
        except Exception as e:
            return status(name, False, "", str(e))
        return status(name, True, "ok")
    for component, port in HTTP_COMPONENTS:
        if component == name:
            return await probe_http(reactor, name, port)
    return None
