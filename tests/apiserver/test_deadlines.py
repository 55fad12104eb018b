"""A request's deadline and its answer: kube's timeout filter, and its write handlers'
own deadline (34 s unless ``?timeout=`` says otherwise)."""

from __future__ import annotations

import pytest
from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.task import Clock

from platform_api import errors
from platform_api.apiserver.site import _with_timeout, deadline

WRITE = "Timeout: request did not complete within requested timeout - context deadline exceeded"
FILTER = "Timeout: request did not complete within the allotted timeout"


@pytest.mark.parametrize(
    ("verb", "query", "outer", "seconds", "message"),
    [
        ("get", b"", 60.0, 60.0, FILTER),
        ("list", b"", 60.0, 60.0, FILTER),
        ("create", b"", 60.0, 34.0, WRITE),
        ("update", b"", 60.0, 34.0, WRITE),
        ("patch", b"", 60.0, 34.0, WRITE),
        ("delete", b"", 60.0, 34.0, WRITE),
        ("deletecollection", b"", 60.0, 34.0, WRITE),
        ("create", b"", 3.0, 3.0, FILTER),  # --request-timeout below 34 s
        ("create", b"10s", 10.0, 10.0, FILTER),  # the same deadline: kube's filter first
        ("create", b"90s", 60.0, 60.0, FILTER),
        ("create", b"0s", 60.0, 34.0, WRITE),
    ],
)
def test_which_deadline_ends_a_request(
    verb: str, query: bytes, outer: float, seconds: float, message: str
) -> None:
    args = {b"timeout": [query]} if query else {}
    got, answer = deadline(verb, args, outer)
    assert got == seconds
    assert answer().status()["message"] == message


def test_a_write_past_its_deadline_is_cancelled_and_answered_504() -> None:
    clock = Clock()
    work: Deferred[None] = Deferred()
    result = ensureDeferred(_with_timeout(work, 34.0, clock, errors.write_timed_out))
    clock.advance(33.9)
    assert not result.called
    clock.advance(0.1)
    failure = result.result
    result.addErrback(lambda _: None)
    assert isinstance(failure.value, errors.StatusError)
    assert failure.value.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": WRITE,
        "reason": "Timeout",
        "details": {},
        "code": 504,
    }
    assert work.called  # cancelled
