"""The LMDB seam: encrypted at rest in ``objects`` and the change log, plaintext out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lmdb
import pytest
from twisted.internet.defer import Deferred

from platform_api.storage.encryption.config import load
from platform_api.storage.encryption.router import ResourceTransformers
from platform_api.storage.interface import (
    DELETED,
    KEY_NOT_FOUND,
    Event,
    ListOptions,
    StorageError,
    Stored,
    Unreadable,
)
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.transformer import (
    TRANSFORM_FAILED,
    StaleStored,
    TransformError,
    listed,
    sealed,
)
from tests.synchronous import run

from .helpers import keys, rule, write_config

SECRET = b"/core/secrets/default/db"
CONFIGMAP = b"/core/configmaps/default/cm"


def inline(work: Callable[[], Any]) -> Deferred[Any]:
    d: Deferred[Any] = Deferred()
    d.callback(work())
    return d


def secret(value: str) -> dict[str, Any]:
    return {"kind": "Secret", "metadata": {"name": "db"}, "data": {"password": value}}


def transformers(tmp_path: Path, *providers: dict[str, Any], name: str = "c") -> Any:
    path = write_config(tmp_path / f"{name}.yaml", rule(["secrets"], *providers))
    return ResourceTransformers(load(path), None)


ENVS: dict[str, lmdb.Environment] = {}


def storage(tmp_path: Path, transformer: Any, events: list[Any] | None = None) -> LMDBStorage:
    env = ENVS[str(tmp_path)] = open_environment(str(tmp_path / "db"), 64 * 2**20)
    sink = events.extend if events is not None else None
    return LMDBStorage(env, inline, sink, transformer=transformer)


def raw_values(tmp_path: Path) -> list[bytes]:
    """Every value in the objects and log databases, as on disk."""
    env = ENVS[str(tmp_path)]
    out = []
    with env.begin() as txn:
        for name in (b"objects", b"log"):
            out += [v for _, v in txn.cursor(db=env.open_db(name, txn=txn))]
    return out


def test_values_encrypted_in_objects_and_log(tmp_path: Path) -> None:
    events: list[Any] = []
    s = storage(tmp_path, transformers(tmp_path, {"aesgcm": keys("k")}), events)
    run(s.create(SECRET, secret("hunter2")))
    run(s.guaranteed_update(SECRET, lambda obj, _: {**obj, "data": {"password": "hunter3"}}))
    run(s.create(CONFIGMAP, {"kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}}))
    values = raw_values(tmp_path)
    assert not any(b"hunter" in v for v in values)
    assert sum(v[8:].startswith(b"k8s:enc:aesgcm:v1:k:") for v in values) == 1  # the object
    assert any(b'"a":"b"' in v for v in values)  # configmaps stay plaintext
    assert s.get(SECRET).object["data"] == {"password": "hunter3"}
    # Watch events (as committed, and replayed from the log) are plaintext.
    assert events[1].stored.object["data"] == {"password": "hunter3"}
    assert events[1].prev.object["data"] == {"password": "hunter2"}
    replay = s.events_since(0)
    assert [e.stored.object["data"]["password"] for e in replay[:2]] == ["hunter2", "hunter3"]
    assert replay[1].prev.object["data"]["password"] == "hunter2"
    now = s.get_list(b"/core/secrets/", _options())
    assert [i.object["data"]["password"] for i in now.items] == ["hunter3"]
    at = s.get_list(b"/core/secrets/", _options(revision=1))
    assert [i.object["data"]["password"] for i in at.items] == ["hunter2"]
    deleted = run(s.delete(SECRET))
    assert deleted.object["data"]["password"] == "hunter3"


def _options(**kw: Any) -> ListOptions:
    return ListOptions(**kw)


def test_rotation_stale_values_rewritten_on_next_write(tmp_path: Path) -> None:
    first = keys("old")
    s = storage(tmp_path, transformers(tmp_path, {"secretbox": first}, name="a"))
    run(s.create(SECRET, secret("x")))
    second = keys("new")
    s._transformer = transformers(
        tmp_path, {"secretbox": {"keys": second["keys"] + first["keys"]}}, name="b"
    )
    current = s.get(SECRET)
    assert isinstance(current, StaleStored)
    rv = current.revision
    # An unchanged object is written anyway when stale (kube's storage migration).
    stored = run(s.guaranteed_update(SECRET, lambda obj, _: obj))
    assert stored.revision == rv + 1
    assert not isinstance(s.get(SECRET), StaleStored)
    assert s.get(SECRET).revision == rv + 1
    # The old key can go now: every value reads with the new one.
    s._transformer = transformers(tmp_path, {"secretbox": second}, name="c")
    assert s.get(SECRET).object["data"]["password"] == "x"
    again = run(s.guaranteed_update(SECRET, lambda obj, _: obj))
    assert again.revision == rv + 1  # not stale: no write


def _unreadable(stored: Stored) -> StorageError:
    assert isinstance(stored, Unreadable)
    with pytest.raises(StorageError) as info:
        stored.object  # noqa: B018 - the read's error is raised here
    return info.value


def test_wrong_key_is_unreadable_and_plaintext_needs_identity(tmp_path: Path) -> None:
    s = storage(tmp_path, None)
    run(s.create(SECRET, secret("plain")))
    s._transformer = transformers(tmp_path, {"aescbc": keys("k")}, name="a")
    error = _unreadable(s.get(SECRET))
    assert (error.code, str(error)) == (TRANSFORM_FAILED, "no matching prefix found")
    (item,) = s.get_list(b"/core/secrets/", _options()).items
    assert str(listed(item)) == (
        'unable to transform key "/registry/secrets/default/db": no matching prefix found'
    )
    only = ListOptions(predicate=lambda obj: False)  # a selector never reads it
    (again,) = s.get_list(b"/core/secrets/", only).items
    assert isinstance(again, Unreadable) and again.key == SECRET
    s._transformer = transformers(tmp_path, {"aescbc": keys("k")}, {"identity": {}}, name="b")
    assert s.get(SECRET).object["data"]["password"] == "plain"
    run(s.guaranteed_update(SECRET, lambda obj, _: obj))  # stale: rewritten encrypted
    s._transformer = transformers(tmp_path, {"aescbc": keys("other")}, name="c")
    error = _unreadable(s.get(SECRET))
    assert str(error) == "no matching key was found for the provided AES transformer"


def test_only_the_unsafe_delete_removes_a_value_that_does_not_decrypt(tmp_path: Path) -> None:
    events: list[Event] = []
    s = storage(tmp_path, transformers(tmp_path, {"aescbc": keys("old")}, name="a"), events)
    run(s.create(SECRET, secret("x")))
    s._transformer = transformers(tmp_path, {"aescbc": keys("new")}, name="b")
    before = s.current_revision()
    with pytest.raises(StorageError) as info:
        run(s.delete(SECRET))
    assert info.value.code == TRANSFORM_FAILED
    assert s.current_revision() == before  # nothing written
    stand_in = {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "db"}}
    run(s.delete_corrupt(SECRET, stand_in))
    with pytest.raises(StorageError) as info:
        s.get(SECRET)
    assert info.value.code == KEY_NOT_FOUND
    # Watchers and the log's readers see the stand-in deleted, sealed in the log as any value.
    (event,) = events[-1:]
    assert (event.type, event.stored.object) == (DELETED, stand_in)
    (logged,) = s.events_since(before)
    assert (logged.type, logged.stored.object) == (DELETED, stand_in)
    assert not any(b'"kind":"Secret"' in v for v in raw_values(tmp_path))


def test_history_of_a_value_that_no_longer_decrypts_is_unreadable(tmp_path: Path) -> None:
    s = storage(tmp_path, transformers(tmp_path, {"aescbc": keys("old")}, name="a"))
    first = run(s.create(SECRET, secret("x")))
    run(s.create(CONFIGMAP, {"kind": "ConfigMap", "metadata": {"name": "cm"}}))
    s._transformer = transformers(tmp_path, {"aescbc": keys("new")}, name="b")
    created, configmap = s.events_since(first.revision - 1)
    assert isinstance(created.stored, Unreadable)
    assert configmap.stored.object["metadata"]["name"] == "cm"
    at_first = s.get_list(b"/core/secrets/", ListOptions(revision=first.revision))
    assert [type(item) for item in at_first.items] == [Unreadable]


@pytest.mark.parametrize(
    ("key", "named"),
    [
        (b"/core/secrets/default/db", "/registry/secrets/default/db"),
        (b"/core/services/default/web", "/registry/services/specs/default/web"),
        (b"/apps/deployments/default/web", "/registry/deployments/default/web"),
        (
            b"/stable.example.com/crontabs/default/c",
            "/registry/stable.example.com/crontabs/default/c",
        ),
    ],
)
def test_a_list_names_an_unreadable_value_by_kubes_etcd_key(key: bytes, named: str) -> None:
    """As kube's list does on its etcd: a built-in resource by its resource (and kube's
    special prefixes), a custom resource with its group."""
    unreadable = sealed(key, 7, b"k8s:enc:aescbc:v1:gone:...", TransformError("no key"))
    assert str(listed(unreadable)) == f'unable to transform key "{named}": no key'
