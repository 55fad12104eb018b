"""Quantities in bodies, as kube-apiserver v1.36 stored and refused them (reference, a
pod's container requests and an emptyDir sizeLimit per value): parsed when decoded,
written back canonical, ResourceList values rounded up to thousandths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from platform_api.codec import parse_json
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.decoding import Decoder
from platform_api.scheme.gonames import DecodeError

SCHEME = builtin_scheme()
KUBE = json.loads((Path(__file__).parent / "fixtures" / "quantities_kube.json").read_text())


def _pod(value: Any) -> dict[str, Any]:
    rt = SCHEME.lookup("", "v1", "pods")
    assert rt is not None
    container = {"name": "c", "image": "i", "resources": {"requests": {"cpu": value}}}
    volume = {"name": "v", "emptyDir": {"sizeLimit": value}}
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"containers": [container], "volumes": [volume]},
    }
    obj, dups = parse_json(orjson.dumps(body))
    decoded: dict[str, Any] = Decoder(SCHEME.schemas, dups).decode(obj, rt.definition).obj
    return decoded


@pytest.mark.parametrize("case", KUBE, ids=[json.dumps(c["value"]) for c in KUBE])
def test_quantities_decode_as_kube_stored_them(case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(DecodeError) as refused:
            _pod(case["value"])
        assert case["error"].endswith(": " + str(refused.value))
        return
    spec = _pod(case["value"])["spec"]
    assert spec["containers"][0]["resources"]["requests"]["cpu"] == case["resource_list"]
    assert spec["volumes"][0]["emptyDir"]["sizeLimit"] == case["quantity"]
