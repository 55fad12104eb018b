"""/openapi/v3 documents are kept across scheme changes that do not touch their group."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

import orjson
from twisted.internet.defer import ensureDeferred
from twisted.internet.task import Clock

from platform_api.apiextensions import crd as crds
from platform_api.apiserver import enablement, runtimeconfig
from platform_api.apiserver.openapi import OpenAPI
from platform_api.scheme.catalog import Scheme


def definition(group: str, maximum: int = 10) -> dict[str, Any]:
    size = {"type": "integer", "maximum": maximum}
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"size": size}}},
    }
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    return {
        "apiVersion": "apiextensions.platform.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [version],
        },
        "status": {"acceptedNames": {"plural": "widgets", "kind": "Widget"}},
    }


def install(scheme: Scheme, crd: dict[str, Any]) -> None:
    scheme.install(
        crd["metadata"]["name"],
        crds.served_types(crd),
        crds.definitions(crd),
        crds.published_definitions(crd),
    )


def test_a_crd_change_rebuilds_its_own_document_only() -> None:
    scheme, _ = enablement.build(runtimeconfig.DEFAULT, lambda name: False, None)  # type: ignore[arg-type]
    api = OpenAPI(scheme)
    install(scheme, definition("a.example.com"))
    install(scheme, definition("b.example.com"))
    api._ensure()
    index = orjson.loads(api.v3_index())["paths"]
    a, b, apps = (
        api.v3_document(f"apis/{g}/v1") for g in ("a.example.com", "b.example.com", "apps")
    )

    install(scheme, definition("b.example.com", maximum=20))  # another schema for b
    install(scheme, definition("c.example.com"))
    api._ensure()
    after = orjson.loads(api.v3_index())["paths"]
    assert api.v3_document("apis/a.example.com/v1") is a  # kept, not made again
    assert api.v3_document("apis/apps/v1") is apps
    changed = api.v3_document("apis/b.example.com/v1")
    assert changed != b and b'"maximum":20' in changed
    assert after["apis/a.example.com/v1"] == index["apis/a.example.com/v1"]
    assert after["apis/b.example.com/v1"] != index["apis/b.example.com/v1"]
    assert "apis/c.example.com/v1" in after

    scheme.uninstall("widgets.a.example.com")
    api._ensure()
    assert "apis/a.example.com/v1" not in orjson.loads(api.v3_index())["paths"]
    assert "apis/a.example.com/v1" not in api._v3


class Turns:
    """A reactor whose turns run one at a time (task.Clock runs a turn's new calls too)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, tuple[Any, ...]]] = []

    def callLater(self, _delay: float, fn: Any, *args: Any) -> Any:
        self.calls.append((fn, args))
        return SimpleNamespace(cancel=lambda: None)

    def turn(self) -> None:
        fn, args = self.calls.pop(0)
        fn(*args)


def test_the_index_builds_missing_documents_one_per_reactor_turn() -> None:
    """The first index must hash every custom group's document: built one a turn, so
    the other requests are served meanwhile."""
    scheme, _ = enablement.build(runtimeconfig.DEFAULT, lambda name: False, None)  # type: ignore[arg-type]
    turns = Turns()
    api = OpenAPI(scheme, None, turns)  # type: ignore[arg-type]
    for group in ("a.example.com", "b.example.com", "c.example.com"):
        install(scheme, definition(group))
    api._ensure()
    done = ensureDeferred(api.built())
    built = []
    while turns.calls:
        assert not done.called
        turns.turn()
        built.append(len(api._v3))
    assert built == [1, 2, 3] and done.called
    assert ensureDeferred(api.built()).called  # nothing left to build: at once


def test_a_new_version_is_dated_a_second_after_the_last() -> None:
    """A client that read a document in the second the next version came must not be
    told (If-Modified-Since) that its copy is current."""
    scheme, _ = enablement.build(runtimeconfig.DEFAULT, lambda name: False, None)  # type: ignore[arg-type]
    clock = Clock()
    clock.advance(1796578572.4)
    api = OpenAPI(scheme, reactor=clock)
    first, second = b'{"paths":{}}', b'{"paths":{"x":{}}}'
    digest = hashlib.sha512(first).hexdigest().upper()
    assert api._version("/openapi/v3", first) == (digest, 1796578572.4)
    clock.advance(0.3)
    assert api._version("/openapi/v3", second)[1] == 1796578573.0  # not .7: a second on
    assert api._version("/openapi/v3", bytes(second))[1] == 1796578573.0  # same content
    clock.advance(5)
    assert api._version("/openapi/v3", first)[1] == 1796578577.7
    assert api._version("/openapi/v3/x", first, "ETAG") == ("ETAG", 1796578577.7)
