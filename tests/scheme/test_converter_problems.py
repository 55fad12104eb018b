"""A type error as kube's unstructured converter words it (a strategic merge patch's result
goes through it): recorded from kube-apiserver v1.36 with ``kubectl patch`` bodies."""

from __future__ import annotations

import pytest

from platform_api.scheme.gonames import DecodeError
from tests.scheme.test_decoding import decode

DEPLOYMENTS = ("apps", "v1", "deployments")
SPEC = '"selector":{"matchLabels":{"a":"b"}},"template":{"spec":{"containers":[{"name":"c"'


@pytest.mark.parametrize(
    ("resource", "body", "json_text", "converter"),
    [
        (
            DEPLOYMENTS,
            '{"spec":{"replicas":"3"}}',
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
            "type int32",
            "unrecognized type: int32",
        ),
        (DEPLOYMENTS, '{"spec":{"paused":"yes"}}', None, "unrecognized type: bool"),
        (DEPLOYMENTS, '{"spec":{"replicas":1.5}}', None, "cannot convert float64 to int32"),
        (DEPLOYMENTS, '{"spec":"x"}', None, "cannot restore struct from: string"),
        (DEPLOYMENTS, '{"spec":{"selector":[1]}}', None, "cannot restore struct from: slice"),
        (DEPLOYMENTS, '{"metadata":{"labels":"x"}}', None, "cannot restore map from string"),
        (DEPLOYMENTS, '{"metadata":{"finalizers":"x"}}', None, "cannot restore slice from string"),
        (
            DEPLOYMENTS,
            '{"spec":{' + SPEC + ',"image":5}]}}}}',
            None,
            "cannot convert int64 to string",
        ),
        (DEPLOYMENTS, '{"spec":{' + SPEC + ',"image":5.5}]}}}}', None, "unrecognized type: string"),
        (
            ("", "v1", "services"),
            '{"spec":{"type":5}}',
            None,
            "cannot convert int64 to v1.ServiceType",
        ),
        # an IntOrString unmarshals the value's JSON itself: encoding/json's words, with
        # no struct field named and a number as Go marshals it
        *(
            (
                DEPLOYMENTS,
                '{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":' + value + "}}}}",
                None,
                f"json: cannot unmarshal {kind} into Go value of type int32",
            )
            for value, kind in (
                ("[]", "array"),
                ('{"a":1}', "object"),
                ("true", "bool"),
                ("1.5", "number 1.5"),
                ("1e21", "number 1e+21"),
                ("2147483648", "number 2147483648"),
            )
        ),
    ],
)
def test_converter_words(
    resource: tuple[str, str, str], body: str, json_text: str | None, converter: str
) -> None:
    with pytest.raises(DecodeError) as raised:
        decode(resource, body.encode())
    if json_text is not None:
        assert str(raised.value) == json_text
    assert raised.value.converter_problem() == converter


def test_errors_without_a_kind_keep_their_text() -> None:
    assert DecodeError("parsing time").converter_problem() == "parsing time"
