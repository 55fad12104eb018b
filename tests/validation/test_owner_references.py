"""Owner references refused as kube-apiserver v1.36 refused each (reference): field
errors name no index, and values are written in Go's field order."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.validation.objectmeta import validate_owner_references

R = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u1"}
P = "metadata.ownerReferences"


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        ([{**R, "uid": ""}], [f'{P}.uid: Invalid value: "": must not be empty']),
        (
            [{"kind": "K", "name": "n", "uid": "u"}],
            [f'{P}.apiVersion: Invalid value: "": version must not be empty'],
        ),
        (
            [{**R, "apiVersion": "a/b/c"}],
            [f'{P}.apiVersion: Invalid value: "a/b/c": version must not be empty'],
        ),
        (
            [{**R, "apiVersion": "apps/"}],
            [f'{P}.apiVersion: Invalid value: "apps/": version must not be empty'],
        ),
        (
            [{}],
            [
                f'{P}.apiVersion: Invalid value: "": version must not be empty',
                f'{P}.kind: Invalid value: "": must not be empty',
                f'{P}.name: Invalid value: "": must not be empty',
                f'{P}.uid: Invalid value: "": must not be empty',
            ],
        ),
        (
            [{**R, "apiVersion": "v1", "kind": "Event"}],
            [
                f'{P}: Invalid value: {{"apiVersion":"v1","kind":"Event","name":"d","uid":"u1"}}: '
                "/v1, Kind=Event is disallowed from being an owner"
            ],
        ),
        (
            [{**R, "controller": True}, {**R, "uid": "u2", "controller": True}],
            [
                f'{P}: Invalid value: [{{"apiVersion":"apps/v1","kind":"Deployment","name":"d",'
                '"uid":"u1","controller":true},{"apiVersion":"apps/v1","kind":"Deployment",'
                '"name":"d","uid":"u2","controller":true}]: Only one reference can have '
                'Controller set to true. Found "true" in references for Deployment/d and '
                "Deployment/d"
            ],
        ),
    ],
)
def test_owner_references_as_kube_refused_them(refs: list[Any], expected: list[str]) -> None:
    assert [str(e) for e in validate_owner_references(refs, P)] == expected
