"""Every kind kube prints, against kube-apiserver v1.36's own Tables of the same objects
(recorded by ``kube/capture.py``): the column definitions, each row's cells (ages counted
from the time kube listed them) and conditions, the rows' order.  The objects are kube's,
with its ``kubernetes.io`` label and annotation keys written as this server's brand."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from platform_api.endpoints import printers
from platform_api.endpoints.tables import TableConvertor
from platform_api.scheme.builtin import BUILTIN_TYPES
from platform_api.scheme.schemas import load_schemas
from platform_api.scheme.types import ResourceType, rebrand_group

CASES = json.loads((pathlib.Path(__file__).parent / "kube" / "tables.json").read_text())


def _resource(path: str) -> ResourceType:
    parts = path.split("?", maxsplit=1)[0].strip("/").split("/")
    group = "" if parts[0] == "api" else rebrand_group(parts[1])
    plural = parts[-1]
    return next(rt for rt in BUILTIN_TYPES if (rt.group, rt.plural) == (group, plural))


def _branded(obj: dict[str, Any]) -> dict[str, Any]:
    meta = dict(obj["metadata"])
    for field in ("labels", "annotations"):
        if field in meta:
            meta[field] = {
                k.replace("kubernetes.io/", "platform.io/"): v for k, v in meta[field].items()
            }
    return {**obj, "metadata": meta}


@pytest.mark.parametrize("case", CASES, ids=[c["path"] for c in CASES])
def test_table_as_kube_prints_it(case: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(printers, "clock", lambda: case["now"])
    items = [_branded(item) for item in case["items"]]
    table = TableConvertor(load_schemas()).table(
        _resource(case["path"]), items, "meta.k8s.io", "v1", "None", {}
    )
    assert table["columnDefinitions"] == case["columnDefinitions"]
    # includeObject=None: each row's object is kube's empty RawExtension, null (the
    # capture kept the rows without it)
    if case["rows"] is None:
        assert table["rows"] is None
        return
    assert all(row["object"] is None for row in table["rows"])
    assert [{k: v for k, v in r.items() if k != "object"} for r in table["rows"]] == case["rows"]
