"""The caches of encoded stored revisions behind Protobuf and CBOR answers."""

from __future__ import annotations

import cbor2
import orjson

from platform_api.codec import cbor, protobuf
from platform_api.endpoints import binary
from platform_api.storage.interface import UNSTORED, Stored


def stored(name: str, revision: int, value: str = "x") -> Stored:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"v": value},
    }
    return Stored(f"/configmaps/default/{name}".encode(), revision, orjson.dumps(obj))


def counting(max_bytes: int = 10) -> tuple[binary.EncodedCache, list[str]]:
    calls: list[str] = []

    def encode(obj: dict, api_version: str, kind: str) -> bytes:
        calls.append(obj["metadata"]["name"])
        return obj["data"]["v"].encode()

    return binary.EncodedCache(encode, max_bytes=max_bytes), calls


def test_each_revision_is_encoded_once() -> None:
    cache, calls = counting()
    first = stored("a", 1, "one")
    assert cache.one(first, "v1", "ConfigMap") == b"one"
    assert cache.many([first, stored("a", 1, "one")], "v1", "ConfigMap") == [b"one", b"one"]
    assert calls == ["a"]
    assert cache.one(stored("a", 2, "two"), "v1", "ConfigMap") == b"two"  # a newer revision
    assert (calls, cache.size) == (["a", "a"], 3)


def test_unstored_objects_are_never_cached() -> None:
    """A dry run's answer is not the stored state of any revision."""
    cache, calls = counting()
    assert cache.one(stored("a", 5, "real"), "v1", "ConfigMap") == b"real"
    dry = Stored(b"/configmaps/default/a", UNSTORED, stored("a", 5, "dry").data)
    assert cache.one(dry, "v1", "ConfigMap") == b"dry"
    assert cache.many([stored("a", 5, "real")], "v1", "ConfigMap") == [b"real"]
    assert calls == ["a", "a"]


def test_views_of_one_revision_are_encoded_apart() -> None:
    """A custom resource's served versions, an autoscaler's v1 and v2 and the two Event
    APIs are views of one stored revision; a group's two names share one encoding."""
    cache, calls = counting(max_bytes=100)
    assert cache.one(stored("a", 5, "v1"), "example.com/v1", "Widget") == b"v1"
    assert cache.one(stored("a", 5, "v2"), "example.com/v2", "Widget") == b"v2"
    assert cache.many([stored("a", 5, "v1")], "example.com/v1", "Widget") == [b"v1"]
    assert cache.one(stored("e", 7, "core"), "v1", "Event") == b"core"
    assert cache.one(stored("e", 7, "new"), "events.platform.io/v1", "Event") == b"new"
    assert cache.one(stored("e", 7, "other"), "events.k8s.io/v1", "Event") == b"new"
    assert calls == ["a", "a", "a", "e", "e"]


def test_the_oldest_entries_leave_first_over_budget() -> None:
    cache, calls = counting()
    for name in "abcd":
        cache.one(stored(name, 1, "xxxx"), "v1", "ConfigMap")
    assert cache.size == 8  # 16 bytes asked for, 10 allowed: a and b went
    cache.many([stored("c", 1, "xxxx"), stored("a", 1, "xxxx")], "v1", "ConfigMap")
    assert calls == ["a", "b", "c", "d", "a"]


def test_protobuf_bodies_from_the_cache() -> None:
    cache = binary.message_cache()
    items = [stored("a", 1), stored("b", 2)]
    body = binary.list_body(cache, items, "v1", "ConfigMapList", {"resourceVersion": "2"})
    decoded = protobuf.decode(body)
    assert [i["metadata"]["name"] for i in decoded["items"]] == ["a", "b"]
    one = protobuf.decode(binary.object_body(cache, items[0], "v1"))
    assert one == items[0].object


def test_cbor_bodies_from_the_cache() -> None:
    cache = binary.cbor_cache()
    items = [stored("a", 1), stored("b", 2)]
    body = binary.cbor_list_body(cache, items, "v1", "ConfigMapList", {"resourceVersion": "2"})
    assert body.startswith(cbor.SELF_DESCRIBED + b"\xa4\x44kind")
    assert cbor.decode(body) == {
        "kind": "ConfigMapList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "2"},
        "items": [items[0].object, items[1].object],
    }
    assert cbor2.loads(binary.cbor_object_body(cache, items[1]))[b"metadata"] == {b"name": b"b"}
