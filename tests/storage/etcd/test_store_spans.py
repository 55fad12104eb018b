"""A traced request's writes on etcd open kube's etcd3 spans under its handler's span,
with kube's attributes and its steps as events; an untraced one opens none."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor

from platform_api.scheme.types import internal_type_name
from platform_api.storage import mediatypes, spans
from platform_api.storage.etcd.client import EtcdClient
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.store import EtcdStorage
from platform_api.storage.interface import KEY_EXISTS, StorageError
from tests.storage.etcd_server import EtcdServer

_names = itertools.count()
CREATE = [
    "About to Encode",
    "Encode succeeded",
    "TransformToStorage succeeded",
    "Txn call succeeded",
    "decode succeeded",
]
UPDATE = [
    "About to Encode",
    "Encode succeeded",
    "TransformToStorage succeeded",
    "Transaction prepared",
    "Txn call completed",
    "Transaction committed",
]


class Span:
    """What the storage does with an OpenTelemetry span: events, then its end."""

    def __init__(self, name: str, attributes: dict[str, Any]) -> None:
        self.name, self.attributes = name, attributes
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.ended = False

    def add_event(self, name: str, attributes: dict[str, Any]) -> None:
        assert not self.ended
        self.events.append((name, attributes))

    def set_attribute(self, name: str, value: Any) -> None:
        self.attributes[name] = value

    def end(self) -> None:
        self.ended = True

    @property
    def steps(self) -> list[str]:
        return [name for name, _ in self.events]


class Trace:
    """A traced request as the storage sees it (apiserver/tracing.py's RequestTrace)."""

    audit_id = "5d3e8a1c-audit"

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.calls: list[Call] = []

    def child(self, name: str, attributes: dict[str, Any], parent: Any = None) -> Span:
        assert parent is None  # a write's span is under the handler's
        self.spans.append(Span(name, attributes))
        return self.spans[-1]

    def grpc_call(self, method: str, host: str, port: int, parent: Any = None) -> Call:
        """The etcd client's call, under the storage span open around it."""
        assert parent is self.spans[-1] and not parent.ended
        self.calls.append(Call(method, parent))
        return self.calls[-1]


class Call:
    """An etcd call's client span: the sizes sent and received, its status."""

    def __init__(self, method: str, parent: Span) -> None:
        self.method, self.parent = method, parent
        self.sizes: list[int] = []
        self.code: int | None = None

    def sent(self, size: int) -> None:
        self.sizes.append(size)

    def received(self, size: int) -> None:
        self.sizes.append(size)

    def end(self, code: int, message: str) -> None:
        self.code = code


@pytest.fixture
def storage(etcd: EtcdServer) -> Iterator[EtcdStorage]:
    client = EtcdClient([etcd.endpoint], reactor)
    layout = KeyLayout("/spans", [("", "configmaps"), ("rbac.authorization.platform.io", "roles")])
    store = EtcdStorage(client, layout, reactor)
    store.load()
    store.start()
    yield store
    store.stop()
    client.close()


def configmap(name: str, **data: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "traced", "uid": "u-1"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def traced() -> Trace:
    trace = Trace()
    spans.TRACE.set(trace)  # this test's coroutine only, as a request's
    return trace


@pytest_twisted.ensureDeferred
async def test_a_create_is_one_span_with_kubes_attributes_and_steps(storage: EtcdStorage) -> None:
    trace = traced()
    name = f"cm{next(_names)}"
    key = f"/core/configmaps/traced/{name}".encode()
    await storage.create(key, configmap(name, k="1"))
    [span] = trace.spans
    assert (span.name, span.attributes, span.steps, span.ended) == (
        "Create etcd3",
        {
            "audit-id": "5d3e8a1c-audit",
            "key": f"/configmaps/traced/{name}",
            "type": "*core.ConfigMap",
            "group": "",
            "resource": "configmaps",
        },
        CREATE,
        True,
    )
    encoded, decoded = span.events[1][1]["len"], span.events[-1][1]["len"]
    assert encoded == decoded > 0  # the Protobuf value's length, both times
    [txn] = trace.calls  # the etcd call, under the write's span
    assert (txn.method, txn.parent, txn.code) == ("etcdserverpb.KV/Txn", span, 0)
    request, response = txn.sizes
    assert request > encoded and response > 0  # the transaction carries the value

    with pytest.raises(StorageError) as exists:
        await storage.create(key, configmap(name, k="2"))
    assert exists.value.code == KEY_EXISTS
    assert (trace.spans[1].steps, trace.spans[1].ended) == (CREATE[:-1], True)


@pytest_twisted.ensureDeferred
async def test_an_update_that_loses_a_race_tries_again_under_one_span(
    storage: EtcdStorage,
) -> None:
    name = f"cm{next(_names)}"
    key = f"/core/configmaps/traced/{name}".encode()
    await storage.create(key, configmap(name, k="1"))  # not traced: no span
    trace = traced()
    raced = False

    async def change(obj: dict[str, Any] | None, _: object) -> dict[str, Any]:
        nonlocal raced
        assert obj is not None
        if not raced:  # another replica writes first: this transaction fails
            raced = True
            value = mediatypes.encode(configmap(name, k="other"), mediatypes.PROTOBUF)
            await storage.client.put(storage.layout.etcd_key(key), value)
        return {**obj, "data": {"k": "2"}}

    updated = await storage.guaranteed_update(key, change)
    assert updated.object["data"] == {"k": "2"}
    [span] = trace.spans
    assert (span.name, span.attributes["type"], span.ended) == (
        "GuaranteedUpdate etcd3",
        "*core.ConfigMap",
        True,
    )
    assert span.steps == [
        "initial value restored",
        *UPDATE,
        "Retry value restored",
        *UPDATE,
        "decode succeeded",
    ]


@pytest_twisted.ensureDeferred
async def test_an_update_that_creates_opens_no_create_span(storage: EtcdStorage) -> None:
    trace = traced()
    key = b"/rbac.authorization.platform.io/roles/traced/reader"
    role = {
        "apiVersion": "rbac.authorization.platform.io/v1",
        "kind": "Role",
        "metadata": {"name": "reader", "namespace": "traced"},
    }
    await storage.guaranteed_update(key, lambda obj, _: role, ignore_not_found=True)
    [span] = trace.spans
    assert (span.name, span.steps) == (
        "GuaranteedUpdate etcd3",
        ["initial value restored", *UPDATE, "decode succeeded"],
    )
    assert span.attributes == {
        "audit-id": "5d3e8a1c-audit",
        "key": "/roles/traced/reader",  # kube keys built-in groups by resource alone
        "type": "*rbac.Role",  # named once there is an object, as kube's decodes into one
        "group": "rbac.authorization.platform.io",
        "resource": "roles",
    }


@pytest_twisted.ensureDeferred
async def test_a_custom_resource_is_unstructured(storage: EtcdStorage) -> None:
    trace = traced()
    key = b"/example.com/widgets/traced/w1"
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}}
    await storage.create(key, widget)
    assert {k: trace.spans[0].attributes[k] for k in ("key", "type", "group")} == {
        "key": "/example.com/widgets/traced/w1",
        "type": "*unstructured.Unstructured",
        "group": "example.com",
    }


@pytest_twisted.ensureDeferred
async def test_an_untraced_write_opens_nothing(storage: EtcdStorage) -> None:
    assert spans.TRACE.get() is None
    name = f"cm{next(_names)}"
    key = f"/core/configmaps/traced/{name}".encode()
    stored = await storage.create(key, configmap(name))
    assert stored.object["metadata"]["name"] == name
    spans.event("Encode succeeded", len=1)  # no span open: nothing to mark, no error


@pytest.mark.parametrize(
    ("group", "kind", "name"),
    [
        ("", "ConfigMap", "*core.ConfigMap"),
        ("apps", "Deployment", "*apps.Deployment"),
        ("rbac.authorization.platform.io", "Role", "*rbac.Role"),
        ("events.platform.io", "Event", "*core.Event"),
        (
            "apiextensions.platform.io",
            "CustomResourceDefinition",
            "*apiextensions.CustomResourceDefinition",
        ),
    ],
)
def test_internal_type_names_are_kubes(group: str, kind: str, name: str) -> None:
    assert internal_type_name(group, kind) == name
