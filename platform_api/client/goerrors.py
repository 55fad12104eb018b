"""Errors of an outgoing HTTP call worded as Go's HTTP client words them.

kube's messages quote its clients' errors (``failed calling webhook``, an APIService's
``FailedDiscoveryCheck``, a proxied request's 503); clients and tests match those words.
"""

from __future__ import annotations

import orjson
from twisted.internet import error as net_error
from twisted.internet.defer import CancelledError, TimeoutError
from twisted.web import client as web_client

DEADLINE = "context deadline exceeded"


def go_error(e: BaseException, server: str) -> str:
    """The error as Go's HTTP client words the common cases."""
    hostport = server.split("://", 1)[-1].split("/", 1)[0]
    # twisted.web reports failures of a request in flight as a list of reasons.
    reasons = [getattr(f, "value", f) for f in getattr(e, "reasons", None) or [e]]
    for reason in reasons:
        if isinstance(
            reason,
            (
                CancelledError,
                TimeoutError,
                net_error.TimeoutError,
                net_error.ConnectingCancelledError,
            ),
        ):
            return DEADLINE
        if isinstance(reason, net_error.ConnectionRefusedError):
            return f"dial tcp {hostport}: connect: connection refused"
        if isinstance(reason, net_error.DNSLookupError):
            return f"dial tcp: lookup {hostport.rsplit(':', 1)[0]}: no such host"
        text = repr(reason)
        if "certificate verify failed" in text or "VerificationError" in text:
            return (
                "tls: failed to verify certificate: x509: certificate signed by unknown authority"
            )
    if isinstance(e, web_client.ResponseNeverReceived):
        return "EOF"
    return str(e) or type(e).__name__


def status_text(code: int, body: bytes) -> str:
    """kube's REST client on a non-2xx answer without a Status body."""
    try:
        status = orjson.loads(body)
    except orjson.JSONDecodeError:
        status = None
    if isinstance(status, dict) and status.get("kind") == "Status" and status.get("message"):
        return str(status["message"])
    if code == 404:
        return "the server could not find the requested resource"
    text = body.decode("utf-8", "replace").strip()
    if text:
        return f'an error on the server ("{text}") has prevented the request from succeeding'
    return f"the server responded with the status code {code} but did not return more information"
