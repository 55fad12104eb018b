"""/healthz, /livez and /readyz with kube's output: ``ok``, ``?verbose``, ``?exclude=``.

Failing checks never say why (these endpoints are public); the reason is logged.
/readyz fails with 503 (as the issue asks: load balancers take it to mean "not now"),
/livez and /healthz with 500, as kube.  Each check a whole endpoint runs is counted for
``/metrics/slis`` (slis.py); one check's own path is not, as in kube.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from twisted.logger import Logger
from twisted.web.server import Request

from platform_api import errors
from platform_api.apiserver.slis import SLIS
from platform_api.endpoints.options import args
from platform_api.endpoints.responses import finish

log = Logger()
Check = Callable[[], str | None]  # None when healthy, else the reason
TEXT = b"text/plain; charset=utf-8"


@dataclass(frozen=True)
class HealthCheck:
    name: str
    check: Check


class HealthEndpoint:
    """One of /healthz, /livez, /readyz and its named checks."""

    def __init__(self, name: str, checks: list[HealthCheck], failure_code: int = 500) -> None:
        self.name = name
        self.checks = checks
        self.failure_code = failure_code

    def render_all(self, request: Request) -> bytes:
        excluded: set[str] = set()
        for value in args(request, b"exclude"):
            excluded.update(v for v in value.split(",") if v)
        unknown = set(excluded)
        lines = []
        failed = []
        for check in self.checks:
            if check.name in excluded:
                unknown.discard(check.name)
                lines.append(f"[+]{check.name} excluded: ok\n")
                continue
            reason = check.check()
            SLIS.observe(check.name, self.name, reason is None)
            if reason is None:
                lines.append(f"[+]{check.name} ok\n")
            else:
                lines.append(f"[-]{check.name} failed: reason withheld\n")
                failed.append(check.name)
                log.info(
                    "{endpoint} check {check} failed: {reason}",
                    endpoint=self.name,
                    check=check.name,
                    reason=reason,
                )
        if unknown:
            quoted = ",".join(f'"{n}"' for n in sorted(unknown))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
        request.setHeader(b"x-content-type-options", b"nosniff")
        if failed:
            body = "".join(lines) + f"{self.name} check failed\n"
            return finish(request, self.failure_code, body.encode(), TEXT)
        if b"verbose" not in request.args:
            return finish(request, 200, b"ok", TEXT)
        body = "".join(lines) + f"{self.name} check passed\n"
        return finish(request, 200, body.encode(), TEXT)

    def render_one(self, request: Request, name: str) -> bytes:
        for check in self.checks:
            if check.name == name:
                reason = check.check()
                request.setHeader(b"x-content-type-options", b"nosniff")
                if reason is None:
                    return finish(request, 200, b"ok", TEXT)
                body = f"internal server error: {reason}\n".encode()
                return finish(request, self.failure_code, body, TEXT)
        raise errors.page_not_found()
