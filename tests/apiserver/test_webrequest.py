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
