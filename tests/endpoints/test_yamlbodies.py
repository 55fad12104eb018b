"""Large YAML bodies are parsed on a thread before the handler runs, and the handler's
``parse_yaml`` takes that outcome (once) rather than parsing on the reactor."""

from __future__ import annotations

import threading
from io import BytesIO
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.web.test.requesthelper import DummyRequest

from platform_api.codec import BodyError, parse_yaml, yamlahead
from platform_api.codec import text as codec_text
from platform_api.endpoints import yamlbodies

BIG = b"kind: ConfigMap\ndata:\n" + b"".join(b"  k%d: v\n" % i for i in range(10000))


def _request(body: bytes, content_type: bytes) -> DummyRequest:
    request = DummyRequest([b""])
    request.method = b"POST"
    request.content = BytesIO(body)
    request.requestHeaders.setRawHeaders(b"content-type", [content_type])
    return request


@pytest.fixture
def parsing_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads ``parse_yaml_now`` ran on."""
    seen: list[int] = []
    real = codec_text.parse_yaml_now

    def recorded(data: bytes) -> Any:
        seen.append(threading.get_ident())
        return real(data)

    monkeypatch.setattr(yamlbodies, "parse_yaml_now", recorded)
    monkeypatch.setattr(codec_text, "parse_yaml_now", recorded)
    return seen


@pytest_twisted.ensureDeferred
async def test_a_large_yaml_body_is_parsed_on_a_thread_and_taken_once(
    parsing_threads: list[int],
) -> None:
    assert len(BIG) > yamlbodies.THRESHOLD
    await yamlbodies.parse_ahead(_request(BIG, b"application/yaml; charset=utf-8"), reactor)
    assert parsing_threads and parsing_threads[0] != threading.get_ident()
    value, duplicates = parse_yaml(BIG)
    assert (value["kind"], len(value["data"]), duplicates) == ("ConfigMap", 10000, {})
    assert len(parsing_threads) == 1  # taken, not parsed again
    parse_yaml(BIG)  # a second parse of the same bytes parses them itself
    assert parsing_threads[1] == threading.get_ident()


@pytest_twisted.ensureDeferred
async def test_a_failed_parse_fails_where_the_handler_parses(parsing_threads: list[int]) -> None:
    bad = BIG + b"  : [\n"
    await yamlbodies.parse_ahead(_request(bad, b"application/apply-patch+yaml"), reactor)
    with pytest.raises(BodyError) as caught:
        parse_yaml(bad)
    assert str(caught.value).startswith("yaml: line ")
    assert len(parsing_threads) == 1


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"kind: ConfigMap\n", b"application/yaml"),  # small: parsed inline
        (BIG, b"application/json"),  # not YAML
        (b"{" + BIG, b"application/apply-patch+yaml"),  # JSON, parsed as JSON first
    ],
)
@pytest_twisted.ensureDeferred
async def test_other_bodies_are_left_to_the_handler(
    parsing_threads: list[int], body: bytes, content_type: bytes
) -> None:
    await yamlbodies.parse_ahead(_request(body, content_type), reactor)
    assert parsing_threads == []
    assert yamlahead.take(body) is None
