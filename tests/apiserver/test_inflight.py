"""The max-in-flight filter (priority and fairness off): kube's limits, its exemptions,
and its plain-text 429."""

from __future__ import annotations

import pytest
import pytest_twisted
from twisted.web.test.requesthelper import DummyRequest

from platform_api.apiserver import requestinfo
from platform_api.apiserver.inflight import InflightLimiter
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.endpoints.responses import write_error
from platform_api.errors import StatusError

LIST = requestinfo.parse(b"GET", "/api/v1/namespaces", {})
CREATE = requestinfo.parse(b"POST", "/api/v1/namespaces", {})
WATCH = requestinfo.parse(b"GET", "/api/v1/namespaces", {b"watch": [b"1"]})
JANE = UserInfo(name="jane")


@pytest_twisted.ensureDeferred
async def test_over_the_limit_is_kubes_plain_text_429() -> None:
    """As ``http.Error`` writes it (and kube's outer filters: Cache-Control)."""
    limiter = InflightLimiter(readonly=1, mutating=1)
    async with limiter.admit(DummyRequest([b""]), LIST, JANE):
        with pytest.raises(StatusError) as error:
            async with limiter.admit(DummyRequest([b""]), LIST, JANE):
                pass
        async with limiter.admit(DummyRequest([b""]), CREATE, JANE):  # its own budget
            pass
    assert limiter.current == {False: 0, True: 0}
    refused = DummyRequest([b""])
    write_error(refused, error.value)
    assert refused.responseCode == 429
    assert b"".join(refused.written) == b"Too many requests, please try again later.\n"
    assert dict(refused.responseHeaders.getAllRawHeaders()) == {
        b"Content-Type": [b"text/plain; charset=utf-8"],
        b"X-Content-Type-Options": [b"nosniff"],
        b"Retry-After": [b"1"],
        b"Cache-Control": [b"no-cache, private"],
        b"Content-Length": [b"43"],
    }
    assert error.value.reason == "TooManyRequests"  # what metrics and audit record


@pytest_twisted.ensureDeferred
async def test_masters_and_long_running_requests_are_not_limited() -> None:
    limiter = InflightLimiter(readonly=1, mutating=1)
    admin = UserInfo(name="admin", groups=(MASTERS,))
    async with limiter.admit(DummyRequest([b""]), LIST, JANE):
        async with limiter.admit(DummyRequest([b""]), LIST, admin):
            pass
        async with limiter.admit(DummyRequest([b""]), WATCH, JANE):
            pass
    assert limiter.current == {False: 0, True: 0}
