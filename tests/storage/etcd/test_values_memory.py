"""The watch cache's values hold their own size: orjson (3.12 on) returns its whole
working buffer (at least 4 KiB), which a cache of small objects would keep ~7 times over."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson

from platform_api.gotext import kept_json, object_json
from platform_api.storage.etcd.kv import KeyValue
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.etcd.values import Values

COUNT = 200


def configmap(i: int) -> dict[str, Any]:
    meta = {"name": f"cm-{i}", "namespace": "ns", "uid": f"u-{i}", "resourceVersion": "5"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"v": "x" * 200}}


def kept_bytes_each(make: Callable[[int], Any]) -> float:
    """Traced memory each of COUNT results of ``make`` holds while kept (after a first
    call, which may load what the path needs once)."""
    make(0)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [make(i) for i in range(COUNT)]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept) == COUNT
    return held / COUNT


def values() -> Values:
    return Values(KeyLayout("/registry", [("", "configmaps")]), None, "application/json")


def kv(i: int) -> KeyValue:
    value = orjson.dumps(configmap(i))
    return KeyValue(b"/registry/configmaps/ns/cm-%d" % i, value, 7, 9, 2)


def test_orjson_keeps_its_working_buffer_which_is_why_kept_values_are_copied() -> None:
    size = len(object_json(configmap(0)))
    assert kept_bytes_each(lambda i: object_json(configmap(i))) > 4 * size
    assert kept_bytes_each(lambda i: kept_json(configmap(i))) < 1.5 * size
    assert kept_json(configmap(3)) == object_json(configmap(3))


def test_a_value_read_from_etcd_holds_its_own_size() -> None:
    decoder, raw = values(), [kv(i) for i in range(COUNT)]
    size = len(raw[0].value)
    each = kept_bytes_each(lambda i: decoder.stored(raw[i]))
    assert each < 1.5 * size + 100  # the value and its Stored, no 4 KiB buffer
    stored = decoder.stored(raw[4])
    assert stored is not None and orjson.loads(stored.data)["metadata"]["resourceVersion"] == "9"


def test_a_write_of_this_server_seen_on_the_watch_holds_its_own_size() -> None:
    decoder, raw = values(), [kv(i) for i in range(COUNT)]
    for i, change in enumerate(raw):
        decoder.pending[b"/core/configmaps/ns/cm-%d" % i] = (change.value, configmap(i))
    size = len(raw[0].value)
    each = kept_bytes_each(lambda i: decoder.own_write(b"/core/configmaps/ns/cm-%d" % i, raw[i]))
    assert each < 1.5 * size + 100
