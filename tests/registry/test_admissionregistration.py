"""Webhook configurations: v1 defaults, the strategies' update rules, the table columns."""

from __future__ import annotations

import copy

from platform_api.endpoints.tables import COLUMNS
from platform_api.registry.admissionregistration import static_suffix_warnings
from platform_api.registry.admissionregistration_validation import Options, update_options
from tests.registry.builders import (
    GROUP,
    MUTATING,
    VALIDATING,
    config,
    created,
    hook,
    strategy,
    update_errors,
)


def test_webhook_defaults() -> None:
    obj = created(
        config(
            MUTATING,
            hook(
                clientConfig={"service": {"namespace": "n", "name": "s"}},
                rules=[{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"]}],
            ),
        )
    )
    webhook = obj["webhooks"][0]
    assert webhook["failurePolicy"] == "Fail"
    assert webhook["matchPolicy"] == "Equivalent"
    assert webhook["namespaceSelector"] == {} and webhook["objectSelector"] == {}
    assert webhook["timeoutSeconds"] == 10
    assert webhook["reinvocationPolicy"] == "Never"
    assert webhook["rules"][0]["scope"] == "*"
    assert webhook["clientConfig"]["service"]["port"] == 443
    assert obj["metadata"]["generation"] == 1


def test_defaults_keep_given_values() -> None:
    given = hook(
        failurePolicy="Ignore",
        matchPolicy="Exact",
        timeoutSeconds=3,
        objectSelector={"matchLabels": {"a": "b"}},
        clientConfig={"service": {"namespace": "n", "name": "s", "port": 8443}},
        rules=[{"scope": "Namespaced"}],
    )
    webhook = created(config(VALIDATING, given))["webhooks"][0]
    assert webhook["failurePolicy"] == "Ignore" and webhook["matchPolicy"] == "Exact"
    assert webhook["timeoutSeconds"] == 3
    assert webhook["objectSelector"] == {"matchLabels": {"a": "b"}}
    assert webhook["clientConfig"]["service"]["port"] == 8443
    assert webhook["rules"][0]["scope"] == "Namespaced"
    assert "reinvocationPolicy" not in webhook  # mutating webhooks only


def test_generation_follows_webhooks_only() -> None:
    old = created(config(VALIDATING, hook()))
    same = copy.deepcopy(old)
    same["metadata"]["labels"] = {"a": "b"}
    strategy(VALIDATING).prepare_for_update(same, old)
    assert same["metadata"]["generation"] == 1
    changed = copy.deepcopy(old)
    changed["webhooks"][0]["timeoutSeconds"] = 5
    strategy(VALIDATING).prepare_for_update(changed, old)
    assert changed["metadata"]["generation"] == 2


def test_updates_need_a_resource_version() -> None:
    assert not strategy(MUTATING).allow_unconditional_update
    assert not strategy(VALIDATING).allow_create_on_update


def test_update_validates_meta_as_kube_does() -> None:
    old = created(config(VALIDATING, hook()))
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"bad key!": "v"}
    new["webhooks"][0]["timeoutSeconds"] = 99
    fields = [e.field for e in update_errors(new, old)]
    # the strategy's own: the metadata as a create's (prepare.check_update's generic
    # checks, as a create's and as an update's, come first: three causes in all, as kube)
    assert fields == ["metadata.labels", "webhooks[0].timeoutSeconds"]
    new = copy.deepcopy(old)
    new["metadata"]["generateName"] = "Bad_"  # a path segment: checked once, as a subdomain
    assert [e.field for e in update_errors(new, old)] == ["metadata.generateName"]


def test_create_options_are_strict() -> None:
    assert update_options([hook()], [hook()]) == Options(ignore_match_conditions=True)
    assert update_options([hook()], []) == Options()


def test_update_keeps_what_is_already_stored() -> None:
    """What an older release stored stays writable: side effects ``Some``, unknown review
    versions, duplicate names, invalid selector values, match conditions left unchanged."""
    stored = hook(
        sideEffects="Some",
        admissionReviewVersions=["v0"],
        namespaceSelector={"matchExpressions": [{"key": "k", "operator": "In", "values": ["a b"]}]},
        matchConditions=[{"name": "m", "expression": "request.name"}],
    )
    old = created(config(MUTATING, stored, copy.deepcopy(stored)))
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"touched": "yes"}
    assert update_errors(new, old) == []
    changed = copy.deepcopy(new)
    changed["webhooks"][0]["matchConditions"][0]["name"] = "n"
    # one changed condition has every webhook's conditions checked again, as kube does
    assert [str(e) for e in update_errors(changed, old)] == [
        f'webhooks[{i}].matchConditions[0].expression: Invalid value: "request.name": '
        "must evaluate to bool but got string"
        for i in (0, 1)
    ]


def test_update_of_valid_objects_stays_strict() -> None:
    old = created(config(VALIDATING, hook()))
    new = copy.deepcopy(old)
    new["webhooks"][0]["sideEffects"] = "Some"
    assert [str(e) for e in update_errors(new, old)] == [
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'
    ]
    relaxed = copy.deepcopy(old)
    relaxed["webhooks"][0]["sideEffects"] = "Unknown"
    relaxed["webhooks"][0].pop("admissionReviewVersions")
    old_some = copy.deepcopy(old)
    old_some["webhooks"][0]["sideEffects"] = "Some"
    assert [str(e) for e in update_errors(relaxed, old_some)] == [
        "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"
    ]
    relaxed["webhooks"][0].pop("sideEffects")
    assert str(update_errors(relaxed, old_some)[0]) == (
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, Some, Unknown"
    )


def test_static_suffix_warning() -> None:
    obj = config(VALIDATING, hook(), name="x.static.platform.io")
    assert static_suffix_warnings(obj) == [
        'metadata.name: names ending with ".static.platform.io" are reserved for static '
        "manifest-based configurations and cannot be managed via the API"
    ]
    assert strategy(VALIDATING).warnings(config(VALIDATING, hook()), None) == []


def test_table_columns() -> None:
    for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        printer = COLUMNS[(GROUP, plural)]
        assert [c.name for c in printer.columns] == ["Name", "Webhooks", "Age"]
        assert [c.type for c in printer.columns] == ["string", "integer", "string"]
        obj = created(config(VALIDATING, hook(), hook(name="b.example.com")))
        obj["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
        name, count, age = printer.cells(obj)
        assert (name, count) == ("cfg", 2) and "y" in age
