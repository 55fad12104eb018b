"""A DaemonSet's template generation, kube's internal spec field that v1 carries as the
``deprecated.daemonset.template.generation`` annotation, as kube-apiserver v1.36 kept it
(reference, 2026-12-08): a create keeps a positive one, an update and a status write the
stored one, and a value Go cannot parse fails the body's decoding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace

ANNOTATION = "deprecated.daemonset.template.generation"
TEMPLATE = {
    "metadata": {"labels": {"a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}


def _daemonset(name: str, **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    spec = {"selector": {"matchLabels": {"a": "b"}}, "template": TEMPLATE}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta, "spec": spec}


def _generation(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["annotations"][ANNOTATION])


def test_the_template_generation_is_kept_as_kube_keeps_it(
    server: Server, admin: requests.Session
) -> None:
    ns = make_namespace(admin, server, "ds-generation").split("/")[4]
    url = f"{server.url}/apis/apps/v1/namespaces/{ns}/daemonsets"
    made = admin.post(url, json=_daemonset("given", **{ANNOTATION: "05"}))
    assert (made.status_code, _generation(made.json())) == (201, "5")
    made = admin.post(url, json=_daemonset("negative", **{ANNOTATION: "-3"}))
    assert (made.status_code, _generation(made.json())) == (201, "1")

    # a template change counts one more; a status write that drops the annotation, or
    # a write that names another value, keeps the stored one (each read afresh: the
    # daemon set controller writes the status meanwhile)
    def relabel(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["metadata"]["labels"]["z"] = "1"

    def reannotate(obj: dict[str, Any]) -> None:
        obj["metadata"]["annotations"] = {"other": "x"}

    def renumber(obj: dict[str, Any]) -> None:
        obj["metadata"]["annotations"][ANNOTATION] = "7"

    changed = _write(admin, f"{url}/negative", relabel)
    assert _generation(changed) == "2"
    status = _write(admin, f"{url}/negative", reannotate, "/status")
    assert status["metadata"]["annotations"] == {"other": "x", ANNOTATION: "2"}
    assert _generation(_write(admin, f"{url}/negative", renumber)) == "2"


def _write(
    admin: requests.Session, url: str, change: Callable[[dict[str, Any]], None], sub: str = ""
) -> dict[str, Any]:
    """PUT the object as ``change`` leaves it, read again after a conflict."""
    for _ in range(20):
        current = admin.get(url).json()
        change(current)
        answer = admin.put(url + sub, json=current)
        if answer.status_code != 409:
            assert answer.status_code == 200, answer.text
            return dict(answer.json())
    raise AssertionError("conflicts did not end")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
        (" 5", 'strconv.ParseInt: parsing " 5": invalid syntax'),
        (
            "9223372036854775808",
            'strconv.ParseInt: parsing "9223372036854775808": value out of range',
        ),
    ],
)
def test_a_generation_go_cannot_parse_fails_decoding(
    server: Server, admin: requests.Session, value: str, problem: str
) -> None:
    url = f"{server.url}/apis/apps/v1/namespaces/default/daemonsets"
    refused = admin.post(url, json=_daemonset("bad", **{ANNOTATION: value}))
    assert (refused.status_code, refused.json()) == (
        400,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'DaemonSet in version "v1" cannot be handled as a DaemonSet: {problem}',
            "reason": "BadRequest",
            "code": 400,
        },
    )
    assert admin.get(f"{url}/bad").status_code == 404
