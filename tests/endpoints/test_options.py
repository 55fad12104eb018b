"""Write options read from the request: the field manager kube infers."""

from __future__ import annotations

import pytest
from twisted.web.test.requesthelper import DummyRequest

from platform_api.endpoints.options import default_field_manager


@pytest.mark.parametrize(
    ("agent", "manager"),
    [
        # as kube-apiserver v1.36 named the manager of a create with each User-Agent
        (None, "unknown"),
        (b"", "unknown"),
        (b"/lead", "unknown"),
        (b"my-ctl/1.0 (linux)", "my-ctl"),
        (b"Go-http-client/1.1", "Go-http-client"),
        (b"a\x01b/1", "ab"),  # unprintable runes dropped, as prefixFromUserAgent does
    ],
)
def test_manager_from_user_agent(agent: bytes | None, manager: str) -> None:
    request = DummyRequest([b""])
    if agent is not None:
        request.requestHeaders.setRawHeaders(b"user-agent", [agent])
    assert default_field_manager(request) == manager
