"""What kube's CertificateSigningRequest controllers share (its certificates.CertificateController).

Each looks at the requests it wants as they change, reads the current one when its
turn comes, and retries a request it could not finish with kube's growing delay
(200 ms doubling, at most 1000 s).  A request is read by its signer's canonical name
(scheme/signers.py), so kube's names count under upstream group names.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller, current_object
from platform_api.registry.store import Store
from platform_api.scheme import signers
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]
GROUP, CSRS = "certificates.platform.io", "certificatesigningrequests"
FIRST_RETRY, MAX_BACKOFF = 0.2, 1000.0


def condition_true(csr: Obj, kind: str) -> bool:
    conditions = (csr.get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def approved(csr: Obj) -> bool:
    """kube's IsCertificateRequestApproved: Approved, and not Denied."""
    return condition_true(csr, "Approved") and not condition_true(csr, "Denied")


def issued(csr: Obj) -> bool:
    return bool((csr.get("status") or {}).get("certificate"))


class CertificateController(Controller):
    """Keys are request names; subclasses say which requests they want and sync them."""

    def __init__(self, csrs: Store, *args: Any, upstream: bool = False) -> None:
        super().__init__(*args)
        self.csrs = csrs
        self.upstream = upstream
        self._failures: dict[str, int] = {}

    def wanted(self, csr: Obj) -> bool:
        raise NotImplementedError

    def resync(self) -> None:
        for stored in self.csrs.list("", ListOptions()).items:
            self._consider(stored.object)

    def watched(self) -> tuple[bytes, ...]:
        return (self.csrs.prefix,)

    def observe(self, event: Event) -> None:
        stored = event.stored
        if event.type != DELETED and stored is not None and event.key.startswith(self.csrs.prefix):
            self._consider(stored.object)

    def _consider(self, csr: Obj) -> None:
        if self.wanted(csr):
            self.enqueue(csr["metadata"]["name"])

    def current(self, name: str) -> Obj | None:
        """The request as stored now, when it is still wanted."""
        csr = current_object(self.csrs, "", name)
        if csr is None:
            return None
        if not self.wanted(csr):
            self.done(name)
            return None
        return csr

    def signer(self, csr: Obj) -> str:
        return signers.canonical((csr.get("spec") or {}).get("signerName") or "", self.upstream)

    def retry(self, name: str) -> float:
        """The delay before this request's next try: kube's per-item exponential backoff."""
        failures = self._failures[name] = self._failures.get(name, 0) + 1
        return min(FIRST_RETRY * 2 ** (failures - 1), MAX_BACKOFF)

    def done(self, name: str) -> None:
        self._failures.pop(name, None)

    def write_if_unchanged(self, seen: Obj, change: Any) -> Any:
        """An update function applying ``change(status)`` to the stored request only while
        it is the one ``seen`` and still wanted; else a conflict (the next event decides)."""

        def write(existing: Obj | None) -> Obj:
            assert existing is not None
            meta = existing.get("metadata") or {}
            same = meta.get("uid") == (seen.get("metadata") or {}).get("uid")
            if not same or not self.wanted(existing):
                raise errors.conflict(CSRS, GROUP, meta.get("name", ""))
            change(existing.setdefault("status", {}))
            return existing

        return write
