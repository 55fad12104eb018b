"""kube's certificatesigningrequest-cleaner-controller: old requests go away.

Every hour, as kube's does, each CertificateSigningRequest is deleted when it is:
issued and approved over an hour ago; denied or failed over an hour ago; pending (no
condition) over a day after creation; approved but not issued for over a day; or issued
with a certificate that has expired.  The ages are read from the conditions'
``lastUpdateTime`` and the object's ``creationTimestamp``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.registry.store import Store
from platform_api.storage.interface import Event, ListOptions
from platform_api.timestamps import parse_timestamp

Obj = dict[str, Any]
POLLING_INTERVAL = 3600.0
APPROVED_EXPIRATION = 3600.0
DENIED_EXPIRATION = 3600.0
PENDING_EXPIRATION = 24 * 3600.0
EVERY = "all"  # the one key: each pass looks at every request


def _older_than(text: object, age: float, now: float) -> bool:
    when = parse_timestamp(text) if text else None
    return when is not None and now - when > age


def certificate_expired(csr: Obj, now: float) -> bool:
    """The issued certificate's notAfter has passed (an unreadable one has not)."""
    data = (csr.get("status") or {}).get("certificate") or ""
    try:
        certs = x509.load_pem_x509_certificates(base64.b64decode(data, validate=True))
    except (ValueError, binascii.Error):
        return False
    return bool(certs) and now > certs[0].not_valid_after_utc.timestamp()


def due(csr: Obj, now: float) -> bool:
    """Whether kube's cleaner deletes ``csr`` at ``now``."""
    status = csr.get("status") or {}
    conditions = status.get("conditions") or []
    is_issued = bool(status.get("certificate"))
    if not conditions:
        created = (csr.get("metadata") or {}).get("creationTimestamp")
        return _older_than(created, PENDING_EXPIRATION, now)
    for c in conditions:
        kind, updated = c.get("type"), c.get("lastUpdateTime")
        if kind == "Approved" and is_issued:
            gone = _older_than(updated, APPROVED_EXPIRATION, now) or certificate_expired(csr, now)
        elif kind == "Approved":  # approved, never issued
            gone = _older_than(updated, PENDING_EXPIRATION, now)
        else:
            gone = kind in ("Denied", "Failed") and _older_than(updated, DENIED_EXPIRATION, now)
        if gone:
            return True
    return False


class CSRCleaner(Controller):
    """One key; each pass deletes what is due and asks to run again in an hour."""

    name = "certificatesigningrequest-cleaner-controller"

    def __init__(self, csrs: Store, *args: Any) -> None:
        super().__init__(*args)
        self.csrs = csrs

    def resync(self) -> None:
        self.enqueue(EVERY)

    def watched(self) -> tuple[bytes, ...]:
        return ()  # kube's cleaner polls

    def observe(self, event: Event) -> None:
        """kube's cleaner polls and does not watch."""

    async def sync(self, key: str) -> float | None:
        now = float(self.reactor.seconds())
        for stored in self.csrs.list("", ListOptions()).items:
            csr = stored.object
            if due(csr, now):
                name = csr["metadata"]["name"]
                await errors.tolerating(self.csrs.delete("", name), 404, 409)
        return POLLING_INTERVAL
