"""FlowSchema and PriorityLevelConfiguration specs refused as the reference kube-apiserver
v1.36 refused them (dry-run creates): its order for a limited level (the limit
response before the percentages) and its internal struct for a distinguisher."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.defaults import apply_defaults
from platform_api.registry.flowcontrol import validate_flow_schema, validate_priority_level

GROUP = "flowcontrol.apiserver.platform.io"


def test_a_limited_level_reads_as_kubes() -> None:
    queuing = {"queues": 0, "handSize": 100, "queueLengthLimit": 0}
    limited = {
        "nominalConcurrencyShares": -1,
        "lendablePercent": 101,
        "limitResponse": {"type": "Queue", "queuing": queuing},
    }
    obj = {"metadata": {"name": "plc1"}, "spec": {"type": "Limited", "limited": limited}}
    apply_defaults(GROUP, "PriorityLevelConfiguration", obj)  # queues 0 is 64, as kube's
    message = errors.invalid(
        "PriorityLevelConfiguration", GROUP, "plc1", validate_priority_level(obj)
    )
    assert message.message == (
        f'PriorityLevelConfiguration.{GROUP} "plc1" is invalid: '
        "[spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative "
        "integer, spec.limited.limitResponse.queuing.handSize: Invalid value: 100: should not "
        "be greater than queues (64), spec.limited.lendablePercent: Invalid value: 101: must "
        "be between 0 and 100, inclusive]"
    )


@pytest.mark.parametrize(("method", "shown"), [({"type": "Bogus"}, "Bogus"), ({}, "")])
def test_a_distinguisher_shows_as_kubes_struct(method: dict[str, Any], shown: str) -> None:
    spec = {"priorityLevelConfiguration": {"name": "x"}, "distinguisherMethod": method}
    obj = {"metadata": {"name": "fsx"}, "spec": spec}
    apply_defaults(GROUP, "FlowSchema", obj)
    errs = validate_flow_schema(obj)
    assert [str(e) for e in errs] == [
        f'spec.distinguisherMethod.type: Unsupported value: {{"Type":"{shown}"}}: '
        'supported values: "ByNamespace", "ByUser"'
    ]


def _schema(**spec: Any) -> list[str]:
    obj = {"metadata": {"name": spec.pop("name", "fs")}, "spec": spec}
    apply_defaults(GROUP, "FlowSchema", obj)
    return [str(e) for e in validate_flow_schema(obj)]


def test_service_account_subjects_and_url_paths_read_as_kubes() -> None:
    """Each as the reference answered (2026-12-06): a subject's name and namespace are
    both checked; a URL path names its first fault."""
    subjects = [
        {"kind": "ServiceAccount", "serviceAccount": {"namespace": ""}},
        {"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": "Bad_NS"}},
    ]
    urls = ["", "/", "x", "/a b", "/a//b", "/a/*", "/a*", "/a/*/*"]
    rule = {"subjects": subjects, "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": urls}]}
    errs = _schema(priorityLevelConfiguration={"name": "x"}, rules=[rule])
    at = "spec.rules[0]"
    assert errs == [
        f"{at}.subjects[0].serviceAccount.name: Required value",
        f"{at}.subjects[0].serviceAccount.namespace: Required value: must specify namespace for "
        "service account",
        f'{at}.subjects[1].serviceAccount.namespace: Invalid value: "Bad_NS": a lowercase RFC '
        "1123 label must consist of lower case alphanumeric characters or '-', and must start "
        "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        f'{at}.nonResourceRules[0].nonResourceURLs[0]: Invalid value: "": must not be empty',
        f'{at}.nonResourceRules[0].nonResourceURLs[2]: Invalid value: "x": must start with slash',
        f'{at}.nonResourceRules[0].nonResourceURLs[3]: Invalid value: "/a b": must not contain '
        "white-space",
        f'{at}.nonResourceRules[0].nonResourceURLs[4]: Invalid value: "/a//b": must not '
        "contain double slash",
        f'{at}.nonResourceRules[0].nonResourceURLs[6]: Invalid value: "/a*": wildcard can only '
        "do suffix matching",
        f'{at}.nonResourceRules[0].nonResourceURLs[7]: Invalid value: "/a/*/*": wildcard can '
        "only do suffix matching",
    ]


def test_a_rules_namespaces_are_named_each_fault_as_kubes() -> None:
    """kube's ValidateNamespaceName gives one message per fault, each after the intro."""
    rule = {
        "subjects": [{"kind": "User", "user": {"name": "u"}}],
        "resourceRules": [
            {
                "verbs": ["get"],
                "apiGroups": ["*"],
                "resources": ["*"],
                "namespaces": ["ok", "a.b", "x" * 64],
            }
        ],
    }
    errs = _schema(priorityLevelConfiguration={"name": "x"}, rules=[rule])
    at, intro = (
        "spec.rules[0].resourceRules[0].namespaces",
        "each member of this list must be '*' or a DNS-1123 label; ",
    )
    assert errs == [
        f'{at}[1]: Invalid value: "a.b": {intro}must not contain dots',
        f'{at}[2]: Invalid value: "{"x" * 64}": {intro}must be no more than 63 characters',
    ]


def test_a_mandatory_schema_changed_is_shown_as_kubes_struct() -> None:
    errs = _schema(name="exempt", priorityLevelConfiguration={"name": "x"})
    assert errs == [
        'spec: Invalid value: {"PriorityLevelConfiguration":{"Name":"x"},"MatchingPrecedence":'
        '1000,"DistinguisherMethod":null,"Rules":null}: spec of \'exempt\' must equal the '
        "fixed value"
    ]
