"""The options object a CONNECT is admitted with, as kube's parameter codec builds it
(each case checked against kube-apiserver v1.36 through a ValidatingAdmissionPolicy
that printed the object it was given)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api import errors
from platform_api.apiserver.requestinfo import parse
from platform_api.endpoints.connectoptions import options


def built(kind: str, path: str, query: dict[str, list[str]] | None = None) -> dict[str, Any]:
    args = {k.encode(): [v.encode() for v in vs] for k, vs in (query or {}).items()}
    return options(kind, parse(b"GET", path, args), args)


POD = "/api/v1/namespaces/default/pods/web"


def test_exec_has_its_streams_container_and_command_in_gos_order() -> None:
    query = {"command": ["ls", "-l"], "stdin": ["1"], "tty": ["T"], "container": ["web"]}
    assert list(built("PodExecOptions", POD + "/exec", query).items()) == [
        ("kind", "PodExecOptions"),
        ("apiVersion", "v1"),
        ("stdin", True),
        ("tty", True),
        ("container", "web"),
        ("command", ["ls", "-l"]),
    ]


def test_an_exec_without_a_command_has_a_null_one() -> None:
    assert built("PodExecOptions", POD + "/exec") == {
        "kind": "PodExecOptions",
        "apiVersion": "v1",
        "command": None,
    }


@pytest.mark.parametrize(
    ("value", "on"),
    [("maybe", True), ("", True), ("no", True), ("off", True), ("FALSE", False), ("0", False)],
)
def test_streams_are_on_unless_false_or_0(value: str, on: bool) -> None:
    got = built("PodAttachOptions", POD + "/attach", {"stdout": [value]})
    assert got == {
        "kind": "PodAttachOptions",
        "apiVersion": "v1",
        **({"stdout": True} if on else {}),
    }


def test_ports_split_on_commas_across_repeats() -> None:
    got = built("PodPortForwardOptions", POD + "/portforward", {"ports": ["80,443", "8080"]})
    assert got == {"kind": "PodPortForwardOptions", "apiVersion": "v1", "ports": [80, 443, 8080]}


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("abc", 'parsing "abc": invalid syntax'),
        ("70000", 'parsing "70000": value out of range'),
        ("-1", 'parsing "-1": invalid syntax'),
        ("80,,81", 'parsing "": invalid syntax'),
        (" 80", 'parsing " 80": invalid syntax'),
    ],
)
def test_a_port_that_is_not_16_bits_unsigned_is_a_bad_request(value: str, why: str) -> None:
    with pytest.raises(errors.StatusError) as refused:
        built("PodPortForwardOptions", POD + "/portforward", {"ports": [value]})
    assert refused.value.code == 400
    assert refused.value.reason == "BadRequest"
    assert refused.value.message == f"cannot convert to []int32: strconv.ParseUint: {why}"


@pytest.mark.parametrize(
    ("path", "subpath"),
    [
        (POD + "/proxy", None),
        (POD + "/proxy/", "/"),
        (POD + "/proxy/x/y", "/x/y"),
        (POD + "/proxy/x/y/", "/x/y/"),
        ("/api/v1/nodes/n1/proxy/b/c", "/b/c"),
    ],
)
def test_a_proxys_path_is_the_rest_of_the_url(path: str, subpath: str | None) -> None:
    got = built("PodProxyOptions", path, {"path": ["/from-the-query"]})
    assert got.get("path") == subpath
