"""ResourceQuota objects: kube's validation messages (as the reference kube-apiserver
answers them), canonical quantities, status isolation and create warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred, succeed

from platform_api.errors import StatusError
from platform_api.registry.quota import ResourceQuotaStrategy
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment

Obj = dict[str, Any]
RT = builtin_scheme().lookup("", "v1", "resourcequotas")


def run(coroutine: Any) -> Any:
    d = ensureDeferred(coroutine)
    out: list[Any] = []
    d.addBoth(out.append)
    if hasattr(out[0], "raiseException"):
        out[0].raiseException()
    return out[0]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    storage = LMDBStorage(
        open_environment(str(tmp_path / "db"), 64 * 2**20), lambda w: succeed(w())
    )
    return Store(RT, storage)


def create(store: Store, spec: Obj, name: str = "q") -> Obj:
    body = {"metadata": {"name": name}, "spec": spec, "status": {"used": {"pods": "9"}}}
    return run(store.create("ns", body)).object  # type: ignore[no-any-return]


def invalid(store: Store, spec: Obj) -> list[str]:
    with pytest.raises(StatusError) as caught:
        create(store, spec)
    assert caught.value.code == 422
    assert caught.value.details is not None
    return [f"{c['field']}: {c['message']}" for c in caught.value.details["causes"]]


def test_quantities_are_stored_canonical_and_status_starts_empty(store: Store) -> None:
    hard = {"pods": 5, "cpu": 0.5, "memory": "1024Mi", "requests.memory": "1.5Gi", "limits.memory": "2048k", "requests.cpu": "1e3"}  # fmt: skip
    got = create(store, {"hard": hard})
    assert got["spec"]["hard"] == {
        "cpu": "500m",
        "limits.memory": "2048k",
        "memory": "1Gi",
        "pods": "5",
        "requests.cpu": "1e3",
        "requests.memory": "1536Mi",
    }
    assert got["status"] == {}


def test_resource_names_and_values(store: Store) -> None:
    hard = {"pods": "1.5", "foo": "1", "cpu": "-1", "example.com/gpu": "0.5", "x/y/z": "1"}
    assert invalid(store, {"hard": hard}) == [
        'spec.hard[pods]: Invalid value: "1500m": must be an integer',
        'spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
        'spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota',
        'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'spec.hard[example.com/gpu]: Invalid value: "500m": must be an integer',
        'spec.hard[x/y/z]: Invalid value: "x/y/z": a valid label key must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')",
    ]


def test_unparsable_quantity_is_a_bad_request(store: Store) -> None:
    with pytest.raises(StatusError) as caught:
        create(store, {"hard": {"pods": "abc"}})
    assert (caught.value.code, caught.value.message) == (
        400,
        'ResourceQuota in version "v1" cannot be handled as a ResourceQuota: quantities must '
        "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    )


def test_scopes(store: Store) -> None:
    value = '["BestEffort","NotBestEffort","Foo"]'
    spec = {"hard": {"pods": "1", "secrets": "1"}, "scopes": ["BestEffort", "NotBestEffort", "Foo"]}
    assert invalid(store, spec) == [
        f"spec.scopes: Invalid value: {value}: unsupported scope applied to resource",
        f"spec.scopes: Invalid value: {value}: unsupported scope applied to resource",
        f"spec.scopes: Invalid value: {value}: unsupported scope",
        f"spec.scopes: Invalid value: {value}: conflicting scopes",
    ]


def test_scope_selector(store: Store) -> None:
    exprs = [
        {"scopeName": "BestEffort", "operator": "In", "values": ["a"]},
        {"scopeName": "PriorityClass", "operator": "In"},
        {"scopeName": "PriorityClass", "operator": "Exists", "values": ["a"]},
        {"scopeName": "Bogus", "operator": "Foo"},
        {"scopeName": "NotBestEffort", "operator": "Exists"},
    ]
    spec = {
        "hard": {"pods": "1", "requests.cpu": "1"},
        "scopeSelector": {"matchExpressions": exprs},
    }
    go = (
        '{"MatchExpressions":[{"ScopeName":"BestEffort","Operator":"In","Values":["a"]},'
        '{"ScopeName":"PriorityClass","Operator":"In","Values":null},'
        '{"ScopeName":"PriorityClass","Operator":"Exists","Values":["a"]},'
        '{"ScopeName":"Bogus","Operator":"Foo","Values":null},'
        '{"ScopeName":"NotBestEffort","Operator":"Exists","Values":null}]}'
    )
    path = "spec.scopeSelector.matchExpressions"
    assert invalid(store, spec) == [
        f"{path}: Invalid value: {go}: unsupported scope applied to resource",
        f"{path}.operator: Invalid value: \"In\": must be 'Exists' when scope is any of "
        "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
        "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
        "ResourceQuotaScopeCrossNamespacePodAffinity",
        f"{path}.values: Required value: must be at least one value when `operator` is 'In' or "
        "'NotIn' for scope selector",
        f"{path}.values: Invalid value: [\"a\"]: must be no value when `operator` is 'Exist' or "
        "'DoesNotExist' for scope selector",
        f'{path}.scopeName: Invalid value: "Bogus": unsupported scope',
        f'{path}.operator: Invalid value: "Foo": not a valid selector operator',
        f"{path}: Invalid value: null: conflicting scopes",
    ]


def test_scopes_are_immutable_and_status_is_the_quota_systems(store: Store) -> None:
    create(store, {"hard": {"pods": "1"}, "scopes": ["BestEffort"]})

    def rescope(current: Obj | None) -> Obj:
        assert current is not None
        current["spec"]["scopes"] = ["NotBestEffort"]
        current["status"] = {"used": {"pods": "1"}}
        return current

    with pytest.raises(StatusError) as caught:
        run(store.update("ns", "q", rescope))
    assert caught.value.message == (
        'ResourceQuota "q" is invalid: spec.scopes: Invalid value: ["NotBestEffort"]: '
        "field is immutable"
    )

    def status(current: Obj | None) -> Obj:
        assert current is not None
        current["status"] = {"hard": {"pods": "1"}, "used": {"pods": "-1"}}
        return current

    with pytest.raises(StatusError) as caught:
        run(store.update("ns", "q", status, subresource="status"))
    assert caught.value.message == (
        'ResourceQuota "q" is invalid: status.used[pods]: Invalid value: "-1": '
        "must be greater than or equal to 0"
    )


def test_warning_when_a_request_exceeds_its_limit() -> None:
    strategy = ResourceQuotaStrategy(RT)
    obj = {"spec": {"hard": {"cpu": "2", "limits.cpu": "1", "requests.memory": "1Gi"}}}
    assert strategy.warnings(obj, None) == [
        "ResourceQuota cpu (2) should be less than limits.cpu (1)"
    ]
    assert strategy.warnings(obj, obj) == []
