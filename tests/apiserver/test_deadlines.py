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
    ("verb", "asked", "limit", "seconds", "message"),
    [
        ("get", 0.0, 60.0, 60.0, FILTER),
        ("list", 0.0, 60.0, 60.0, FILTER),
        ("get", 5.0, 60.0, 5.0, FILTER),
        ("create", 0.0, 60.0, 34.0, WRITE),
        ("update", 0.0, 60.0, 34.0, WRITE),
        ("patch", 0.0, 60.0, 34.0, WRITE),
        ("delete", 0.0, 60.0, 34.0, WRITE),
        ("deletecollection", 0.0, 60.0, 34.0, WRITE),
        ("create", 0.0, 3.0, 3.0, FILTER),  # --request-timeout below 34 s
        ("create", 10.0, 60.0, 10.0, FILTER),  # the same deadline: kube's filter first
        ("create", 90.0, 60.0, 60.0, FILTER),
        ("create", -1.0, 60.0, 34.0, WRITE),
    ],
)
def test_which_deadline_ends_a_request(
    verb: str, asked: float, limit: float, seconds: float, message: str
) -> None:
    got, answer = deadline(verb, asked, limit)
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
