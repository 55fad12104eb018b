"""Accept and Content-Type negotiation, and continue tokens."""

from __future__ import annotations

import pytest

from platform_api.endpoints import continuation
from platform_api.endpoints.negotiation import input_type, negotiate_output
from platform_api.errors import StatusError

KUBECTL_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def test_output_choices() -> None:
    assert negotiate_output("").format == "json"
    assert negotiate_output("*/*").format == "json"
    assert negotiate_output("application/yaml").format == "yaml"
    assert negotiate_output("application/vnd.platform.protobuf, application/json").format == "json"
    table = negotiate_output(KUBECTL_TABLE, table=True)
    assert (table.format, table.group, table.version) == ("table", "meta.k8s.io", "v1")
    assert negotiate_output(KUBECTL_TABLE, table=False).format == "json"
    assert negotiate_output("application/yaml;q=0.5, application/json").format == "json"


def test_not_acceptable() -> None:
    with pytest.raises(StatusError) as caught:
        negotiate_output("application/vnd.platform.protobuf")
    assert caught.value.code == 406


def test_input_types() -> None:
    assert input_type("", ["application/json"]) == "application/json"
    assert input_type("application/json; charset=utf-8", ["application/json"]) == "application/json"
    with pytest.raises(StatusError) as caught:
        input_type("text/plain", ["application/json"])
    assert caught.value.code == 415


def test_continue_tokens_round_trip_and_refuse_garbage() -> None:
    token = continuation.encode(42, b"default\x00cm-7")
    assert continuation.decode(token) == (42, b"default\x00cm-7")
    assert "=" not in token
    for bad in ("%%%", "e30", continuation.encode(0, b"x")):
        with pytest.raises(StatusError) as caught:
            continuation.decode(bad)
        assert caught.value.code == 400
        assert caught.value.message.startswith("invalid continue token: continue key is not valid")
