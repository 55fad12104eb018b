"""The cache mutation detector (``PLATFORM_CACHE_MUTATION_DETECTOR``, client-go's
``KUBE_CACHE_MUTATION_DETECTOR``): a shared object edited in place is caught on its
next read, with where it was read before."""

from __future__ import annotations

import orjson
import pytest

from platform_api.storage import interface
from platform_api.storage.interface import (
    UNREADABLE,
    CacheMutation,
    StorageError,
    Stored,
    Unreadable,
)


def shared() -> Stored:
    return Stored(b"/core/configmaps/ns/a", 3, orjson.dumps({"data": {"k": "v"}}))


def test_an_edit_in_place_is_caught_on_the_next_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interface, "MUTATION_DETECTOR", True)
    stored = shared()
    stored.object["data"]["k"] = "edited"  # a reader that should have taken copy()
    with pytest.raises(CacheMutation) as caught:
        _ = stored.object
    message = str(caught.value)
    assert message.startswith("a reader edited the shared object of b'/core/configmaps/ns/a'")
    assert "test_an_edit_in_place_is_caught_on_the_next_read" in message  # the editing reader


def test_copies_may_be_edited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interface, "MUTATION_DETECTOR", True)
    stored = shared()
    private = stored.copy()
    private["data"]["k"] = "edited"
    assert stored.object == {"data": {"k": "v"}}
    assert stored.object is stored.object


def test_off_reads_check_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interface, "MUTATION_DETECTOR", False)  # the default
    stored = shared()
    stored.object["data"]["k"] = "edited"
    assert stored.object["data"]["k"] == "edited"


def test_a_glance_keeps_no_decoding_but_shares_one_made_already(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``glance`` (a reader that keeps nothing, the garbage collector) leaves no decoded
    object behind in a cached Stored; once another reader decoded it, it is that one,
    and checked as every shared read is."""
    monkeypatch.setattr(interface, "MUTATION_DETECTOR", True)
    stored = shared()
    assert stored.glance() == {"data": {"k": "v"}}
    assert stored.glance() is not stored.glance()  # not kept: decoded per glance
    decoded = stored.object
    assert stored.glance() is decoded
    decoded["data"]["k"] = "edited"
    with pytest.raises(CacheMutation):
        stored.glance()


def test_a_glance_at_a_value_that_does_not_decode_fails_as_a_read_does() -> None:
    error = StorageError(UNREADABLE, b"/core/configmaps/ns/b", "not a map")
    bad = Unreadable(b"/core/configmaps/ns/b", 3, b"{}", error, "/registry/configmaps/ns/b")
    with pytest.raises(StorageError) as caught:
        bad.glance()
    assert caught.value is error
