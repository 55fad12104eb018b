"""kube's corrupt-object errors (AllowUnsafeMalformedObjectDeletion on)."""

from __future__ import annotations

from platform_api.apiserver.features import ALLOW_UNSAFE_MALFORMED_OBJECT_DELETION, GATES
from platform_api.registry import corrupt
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.interface import UNREADABLE, StorageError, Unreadable
from platform_api.storage.transformer import TRANSFORM_FAILED


def _unreadable(name: str, code: str = UNREADABLE) -> StorageError:
    key = f"/apps/deployments/ns/{name}".encode()
    error = StorageError(code, key, "illegal base64 data at input byte 4")
    where = f"/registry/deployments/ns/{name}"
    Unreadable(key, 7, b"words", error, where, where.removeprefix("/registry"))
    return error


def test_a_read_names_the_key_under_the_prefix_and_a_list_the_whole_key() -> None:
    error = _unreadable("d")
    assert error.corrupt is not None
    read = corrupt.read_error(error, error.corrupt).status()
    text = (
        "StorageError: corrupt object, Code: 7, Key: /deployments/ns/d, ResourceVersion: 0, "
        "AdditionalErrorMsg: object not decodable revision=7: illegal base64 data at input byte 4"
    )
    assert (read["reason"], read["message"]) == (
        "InternalError",
        f"Internal error occurred: {text}",
    )
    update = corrupt.update_error(error, error.corrupt).status()
    assert ("reason" in update, update["message"]) == (
        False,
        "object not decodable revision=7: illegal base64 data at input byte 4",
    )
    sealed = _unreadable("s", TRANSFORM_FAILED)
    assert sealed.corrupt is not None
    assert corrupt.update_error(sealed, sealed.corrupt).status()["message"] == (
        "Internal error occurred: data from the storage is not transformable revision=0: "
        "illegal base64 data at input byte 4"
    )


def test_a_list_names_at_most_a_hundred_then_says_it_stopped() -> None:
    rt = builtin_scheme().lookup("apps", "v1", "deployments")
    assert rt is not None
    status = corrupt.list_error(rt, [_unreadable(f"d{i:03}") for i in range(101)]).status()
    assert status["message"] == "failed to read one or more deployments.apps from the storage"
    details = status["details"]
    assert (details["name"], details["group"], details["kind"]) == ("list", "apps", "deployments")
    assert len(details["causes"]) == 101
    assert details["causes"][0]["field"] == "/registry/deployments/ns/d000"
    assert details["causes"][-1] == {
        "reason": "TooMany",
        "message": "too many errors, the list is truncated",
    }


def test_its_gate_is_the_servers() -> None:
    """The registry names the gate itself: the supervisor reads flags without loading it."""
    assert corrupt.GATE == ALLOW_UNSAFE_MALFORMED_OBJECT_DELETION
    assert corrupt.GATE in GATES
