"""The etcd request-size model every backend applies, and the LMDB backend applying it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import Deferred, ensureDeferred, succeed

from platform_api.storage.interface import (
    MAX_REQUEST_BYTES,
    REQUEST_TOO_LARGE,
    StorageError,
    Stored,
)
from platform_api.storage.limits import (
    ETCD_TOO_LARGE,
    check_write_size,
    etcd_key_length,
    stored_length,
    txn_size,
)
from platform_api.storage.lmdb_store import LMDBStorage, open_environment

# Measured on kube-apiserver 1.36 with etcd 3.6: the largest custom resources it stored.
# (etcd key length, stored JSON length without its newline)
MEASURED = [(50, 1572723), (242, 1572336)]


@pytest.mark.parametrize(("key", "value"), MEASURED)
def test_the_model_matches_etcds_limit(key: int, value: int) -> None:
    obj_ok = {"k": "x" * (value - len('{"k":""}'))}
    obj_over = {"k": "x" * (value + 1 - len('{"k":""}'))}
    raw_key = b"/sizes.example.com/blobs/" + b"n" * (
        key - len("/registry/sizes.example.com/blobs/")
    )
    assert etcd_key_length(raw_key) == key
    check_write_size(raw_key, obj_ok)
    with pytest.raises(StorageError) as caught:
        check_write_size(raw_key, obj_over)
    assert (caught.value.code, str(caught.value)) == (REQUEST_TOO_LARGE, ETCD_TOO_LARGE)


def test_a_two_mebibyte_request_is_refused_by_the_client_with_its_size() -> None:
    obj = {
        "apiVersion": "sizes.example.com/v1",
        "data": "x" * 2097152,
        "kind": "Blob",
        "metadata": {
            "creationTimestamp": "2026-11-23T17:39:56Z",
            "generation": 1,
            "name": "two",
            "namespace": "default",
            "uid": "79dd28bf-d176-455a-ac61-2e6e6b10d82d",
        },
    }
    with pytest.raises(StorageError) as caught:
        check_write_size(b"/sizes.example.com/blobs/default/two", obj)
    assert str(caught.value) == (  # kube-apiserver 1.36's answer to this very object
        "rpc error: code = ResourceExhausted desc = trying to send message larger than max "
        "(2097480 vs. 2097152)"
    )


def test_go_float_forms_count_toward_the_limit() -> None:
    """orjson writes 1e+20 in 5 bytes, Go in 21: an object that fits as orjson writes it
    but not as etcd would hold it is refused, and one that fits both ways is taken."""
    key, value = MEASURED[0]
    raw_key = b"/sizes.example.com/blobs/" + b"n" * (
        key - len("/registry/sizes.example.com/blobs/")
    )
    floats = [1e20] * 1000  # 16,000 bytes more in Go's form than in orjson's
    room = value - len('{"f":[],"k":""}') - len(",".join(["100000000000000000000"] * 1000))
    check_write_size(raw_key, {"f": floats, "k": "x" * room})
    with pytest.raises(StorageError) as caught:
        check_write_size(raw_key, {"f": floats, "k": "x" * (room + 1)})
    assert str(caught.value) == ETCD_TOO_LARGE


def test_the_stored_size_leaves_out_the_resource_version() -> None:
    obj = {"metadata": {"name": "a", "resourceVersion": "12345"}}
    assert stored_length(obj) == len(b'{"metadata":{"name":"a"}}') + 1
    assert obj["metadata"]["resourceVersion"] == "12345"  # the caller's object is untouched


def test_keys_are_measured_as_kube_keys_them() -> None:
    """Built-in resources by resource alone (tests/storage/etcd/test_layout.py has them
    all), custom resources with their group."""
    assert etcd_key_length(b"/apps/deployments/default/a") == len(
        b"/registry/deployments/default/a"
    )
    custom = b"/sizes.example.com/blobs/default/a"
    assert etcd_key_length(custom) == len(b"/registry" + custom)


def test_an_update_also_carries_the_read_back_on_failure() -> None:
    assert txn_size(50, 1000, 7) > txn_size(50, 1000, 0) + 50
    assert MAX_REQUEST_BYTES == 1572864


def _inline(work: Any) -> Deferred[Any]:
    return succeed(work())


def _error_of(d: Deferred[Any]) -> StorageError:
    errors: list[Any] = []
    d.addErrback(errors.append)
    assert len(errors) == 1 and isinstance(errors[0].value, StorageError)
    error: StorageError = errors[0].value
    return error


def test_lmdb_refuses_what_etcd_would_and_stores_nothing(tmp_path: Path) -> None:
    storage = LMDBStorage(open_environment(str(tmp_path / "db"), 64 * 2**20), _inline)
    big = {"metadata": {"name": "big"}, "data": "x" * MAX_REQUEST_BYTES}
    assert _error_of(storage.create(b"/core/configmaps/ns/big", big)).code == REQUEST_TOO_LARGE
    assert storage.current_revision() == 0
    created: list[Stored] = []
    storage.create(b"/core/configmaps/ns/s", {"metadata": {"name": "s"}}).addCallback(
        created.append
    )
    assert created[0].revision == 1

    def grow(obj: Any, _stored: Any) -> Any:
        return {**obj, "data": "x" * MAX_REQUEST_BYTES}

    update = ensureDeferred(storage.guaranteed_update(b"/core/configmaps/ns/s", grow))
    assert _error_of(update).code == REQUEST_TOO_LARGE
    assert storage.get(b"/core/configmaps/ns/s").revision == 1
