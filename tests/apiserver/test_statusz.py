"""/statusz as kube-apiserver v1.36 answers it (answers recorded from the reference)."""

from __future__ import annotations

import random
import time

import orjson
import pytest

from platform_api.apiserver import statusz
from platform_api.errors import StatusError

VERSIONS = {
    "gitVersion": "v1.36.0+platform.0.1.0",
    "goVersion": "python3.11.7",
    "emulationMajor": "1",
    "emulationMinor": "36",
}
STRUCTURED = "application/json;v=v1alpha1;g=config.platform.io;as=Statusz"


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        ("", ("text/plain", "")),
        ("*/*", ("text/plain", "")),
        ("text/*", ("text/plain", "")),
        ("text/plain;q=0.5, application/json", ("text/plain", "")),
        ("text/plain;q=0.1, " + STRUCTURED, ("application/json", "v1alpha1")),
        (
            "application/yaml;as=Statusz;g=config.platform.io;v=v1beta1",
            ("application/yaml", "v1beta1"),
        ),
    ],
)
def test_what_an_accept_header_gets(accept: str, chosen: tuple[str, str]) -> None:
    assert statusz.negotiate(accept, "Statusz") == chosen


@pytest.mark.parametrize(
    "accept",
    [
        "application/json",
        "text/html",
        "application/*",
        "application/json;v=v2;g=config.platform.io;as=Statusz",
        "application/json;v=v1alpha1;g=config.platform.io;as=Flagz",
        "application/json;v=v1alpha1;g=config.k8s.io;as=Statusz",
    ],
)
def test_anything_else_is_kubes_406(accept: str) -> None:
    with pytest.raises(StatusError) as refused:
        statusz.negotiate(accept, "Statusz")
    assert (refused.value.code, refused.value.reason) == (406, "NotAcceptable")
    assert refused.value.message == (
        "only the following media types are accepted: application/json, application/yaml, "
        "text/plain"
    )


def test_the_debugging_paths_are_the_first_segments_that_are_no_api() -> None:
    listed = ["/api", "/api/v1", "/apis/", "/apis/apps/v1", "/healthz", "/healthz/ping"]
    listed += ["/.well-known/openid-configuration", "/openid/v1/jwks", "/openapi/v3/"]
    listed += ["/metrics", "/metrics/slis", "/statusz", "/version"]
    assert statusz.debugging_paths(listed) == ["/healthz", "/metrics", "/statusz", "/version"]


def test_the_text_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """Started in Go's UnixDate layout, in the server's time zone (UTC here)."""
    zone = time.strftime("%Z", time.localtime(1796571209.0))
    monkeypatch.setattr(random, "choice", lambda choices: choices[1])  # ": "
    monkeypatch.setattr(time, "time", lambda: 1796571209.0 + 3725)
    body, content_type, warning = statusz.render("", 1796571209.0, VERSIONS, ["/livez", "/statusz"])
    assert content_type == b"text/plain; charset=utf-8" and warning is None
    assert body.decode() == (
        "\napiserver statusz\nWarning: This endpoint is not meant to be machine parseable, has "
        "no formatting compatibility guarantees and is for debugging purposes only.\n\n"
        f"Started:  {time.strftime('%a %b %e %H:%M:%S', time.localtime(1796571209.0))} "
        f"{zone} 2026\n"
        "Up:  1 hr 02 min 05 sec\n"
        "Go version:  python3.11.7\n"
        "Binary version:  1.36.0+platform.0.1.0\n"
        "Emulation version:  1.36\n"
        "Paths:  /livez /statusz\n"
    )


def test_the_structured_page() -> None:
    body, content_type, warning = statusz.render(STRUCTURED, 1796571209.0, VERSIONS, ["/livez"])
    assert content_type == b"application/json;g=config.platform.io;v=v1alpha1;as=Statusz"
    assert warning == (
        b'299 - "This version of the statusz endpoint is deprecated. Please use a newer version."'
    )
    doc = orjson.loads(body)
    assert list(doc) == [
        "kind",
        "apiVersion",
        "metadata",
        "startTime",
        "uptimeSeconds",
        "goVersion",
        "binaryVersion",
        "emulationVersion",
        "paths",
    ]
    assert doc["apiVersion"] == "config.platform.io/v1alpha1"
    assert doc["startTime"] == "2026-12-06T15:33:29Z" and doc["emulationVersion"] == "1.36"
    assert body.startswith(b'{\n  "kind": "Statusz",\n')
