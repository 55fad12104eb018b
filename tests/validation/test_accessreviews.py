"""The access-review rules of pkg/apis/authorization/validation and the REST's
evaluationError, case by case."""

from __future__ import annotations

from platform_api.validation.accessreviews import (
    evaluation_error,
    validate_local,
    validate_metadata,
    validate_spec,
)

AT = "spec.resourceAttributes"


def bodies(errs: list) -> list[tuple[str, str]]:
    return [(e.field, e.body()) for e in errs]


def test_one_kind_of_attributes_and_a_subject() -> None:
    assert bodies(validate_spec({"nonResourceAttributes": {"path": "/"}}, subject=False)) == []
    assert bodies(validate_spec({"resourceAttributes": {}, "groups": ["g"]}, subject=True)) == []
    assert bodies(validate_spec({}, subject=False)) == [
        (
            AT,
            "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )
    ]


def test_selector_attributes() -> None:
    unknown = {"key": "a", "operator": "Later", "values": ["x"]}  # a newer client's operator
    spec = {"resourceAttributes": {"labelSelector": {"requirements": [unknown]}}}
    assert bodies(validate_spec(spec, subject=False)) == []
    exists = {"key": "a", "operator": "Exists", "values": ["x"]}
    spec = {"resourceAttributes": {"fieldSelector": {"requirements": [exists]}}}
    assert bodies(validate_spec(spec, subject=False)) == [
        (
            f"{AT}.fieldSelector.requirements[0].values",
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )
    ]


def test_metadata_and_the_local_namespace() -> None:
    tracked = {"managedFields": [{"manager": "m"}], "namespace": "ns"}
    assert validate_metadata(tracked, local=True) == []
    assert bodies(validate_metadata(tracked, local=False))[0][1].endswith(": must be empty")
    spec = {"resourceAttributes": {"namespace": "ns"}}
    assert validate_local(spec, "ns") == []
    assert bodies(validate_local({"resourceAttributes": {}}, "ns")) == [
        (f"{AT}.namespace", 'Invalid value: "": must match metadata.namespace')
    ]


def test_evaluation_errors_name_what_was_ignored() -> None:
    assert evaluation_error({"labelSelector": {"rawSelector": "a=b"}}) == ""
    assert evaluation_error({"fieldSelector": {"rawSelector": "nonsense"}}) == (
        f"{AT}.fieldSelector ignored due to parse error"
    )
    some = [{"key": "a", "operator": "In", "values": ["x"]}, {"key": "b", "operator": "Bad"}]
    assert evaluation_error({"labelSelector": {"requirements": some}}) == (
        f"{AT}.labelSelector partially ignored due to parse error"
    )
    assert evaluation_error(None) == ""
