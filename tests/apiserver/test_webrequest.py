"""The request as kube's server reads it: a repeated header is its first value (Go's
``Header.Get``); kube-apiserver authenticated the first of two Authorization headers
(reference), Twisted's ``getHeader`` read the last."""

from __future__ import annotations

from twisted.web.test.requesthelper import DummyChannel

from platform_api.apiserver.webrequest import APIRequest


def test_a_repeated_header_is_its_first_value() -> None:
    request = APIRequest(DummyChannel())
    request.requestHeaders.addRawHeader(b"Authorization", b"Bearer first")
    request.requestHeaders.addRawHeader(b"authorization", b"Bearer second")
    assert request.getHeader(b"authorization") == b"Bearer first"
    assert request.getHeader("Authorization") == "Bearer first"
    assert request.getHeader(b"accept") is None


def test_a_value_that_is_no_utf_8_reads_as_go_writes_it() -> None:
    """A Content-Type with a stray byte was a 500 (Twisted's strict decoding raised in
    the request metrics); kube's answer is its 415 (found by fuzzing both)."""
    request = APIRequest(DummyChannel())
    request.requestHeaders.addRawHeader(b"Content-Type", b"applicatio\xff/json")
    assert request.getHeader("content-type") == "applicatio\ufffd/json"
    assert request.getHeader(b"content-type") == b"applicatio\xff/json"
