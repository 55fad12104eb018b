"""The value transformer seam: what a storage backend applies to the bytes it keeps.

Modelled on k8s.io/apiserver ``storage/value.Transformer``.  A backend hands every
value it writes to ``to_storage`` and every value it reads to ``from_storage``, with
the key as authenticated data, so encryption at rest (platform_api/storage/encryption)
is one constructor argument for LMDB and the etcd backend alike.
"""

from __future__ import annotations

from typing import Protocol, overload

from platform_api.storage.etcd.layout import DEFAULT_PREFIX, default_kube_key
from platform_api.storage.interface import Event, StorageError, Stored, Unreadable

# The StorageError code of a value that could not be transformed: registries answer it
# as kube's NewInternalError does (500 "Internal error occurred: ...").
TRANSFORM_FAILED = "TransformFailed"


# The prefixes of the providers that authenticate a value by its key (kube's dataCtx):
# AES-GCM and KMS v2 (whose data key seals with AES-GCM).
AUTHENTICATED_PREFIXES = (b"k8s:enc:aesgcm:v1:", b"k8s:enc:kms:v2:")


class TransformError(Exception):
    """A value could not be encrypted or decrypted (kube's message as the text)."""


class ValueTransformer(Protocol):
    """``key`` is the registry key (it chooses the resource's providers); ``context`` is
    the authenticated data, kube's ``dataCtx``: the key as the storage keeps it (``key``
    when None; on etcd the etcd key, as kube-apiserver's, so either reads the other's
    AES-GCM and KMS v2 values)."""

    def to_storage(self, key: bytes, data: bytes, context: bytes | None = None) -> bytes:
        """The bytes to store for ``data``; raises TransformError."""
        ...

    def from_storage(
        self, key: bytes, data: bytes, context: bytes | None = None
    ) -> tuple[bytes, bool]:
        """The plaintext of stored bytes and whether they are stale (not written the way
        the current configuration writes: an older key or provider); raises TransformError."""
        ...


class StaleStored(Stored):
    """A value read through a non-first key or provider: the next write must store it
    again even when the object did not change (kube's storage migration)."""

    __slots__ = ()


def read(transformer: ValueTransformer | None, key: bytes, revision: int, data: bytes) -> Stored:
    """A stored value as a Stored: Unreadable if it does not decrypt, so a read reports it
    (kube's InternalError), the server's own lists pass over it and an unsafe delete can
    remove it, as on etcd (storage/etcd/values.py)."""
    if transformer is None:
        return Stored(key, revision, data)
    try:
        plain, stale = transformer.from_storage(key, data)
    except TransformError as e:
        return sealed(key, revision, data, e)
    return StaleStored(key, revision, plain) if stale else Stored(key, revision, plain)


def sealed(key: bytes, revision: int, data: bytes, error: TransformError) -> Unreadable:
    """A value that does not decrypt, named (for a list's message) by its etcd key."""
    failure = StorageError(TRANSFORM_FAILED, key, str(error))
    where = default_kube_key(key)
    return Unreadable(key, revision, data, failure, where, where.removeprefix(DEFAULT_PREFIX))


def listed(stored: Unreadable) -> StorageError:
    """What a list that meets ``stored`` fails with: a value that does not decrypt is
    named by its key in etcd, as kube's list names it."""
    error = stored.error
    if error.code != TRANSFORM_FAILED:
        return error
    text = f'unable to transform key "{stored.where}": {error}'
    return StorageError(error.code, error.key, text)


@overload
def read_logged(transformer: ValueTransformer | None, stored: Stored) -> Stored: ...


@overload
def read_logged(transformer: ValueTransformer | None, stored: None) -> None: ...


def read_logged(transformer: ValueTransformer | None, stored: Stored | None) -> Stored | None:
    """A change-log value, decrypted; one that no longer decrypts (its key was removed)
    is Unreadable, which watchers never get, as they never get such a value on etcd."""
    if transformer is None or stored is None:
        return stored
    return read(transformer, stored.key, stored.revision, stored.data)


def write(
    transformer: ValueTransformer | None, key: bytes, data: bytes, context: bytes | None = None
) -> bytes:
    """The bytes to store; TransformError propagates (the writer fails that write only)."""
    return data if transformer is None else transformer.to_storage(key, data, context)


def plain_event(transformer: ValueTransformer | None, event: Event) -> Event:
    """A change-log event with its values decrypted (watchers never see ciphertext)."""
    if transformer is None:
        return event
    stored = read_logged(transformer, event.stored)
    prev = stored if event.stored is event.prev else read_logged(transformer, event.prev)
    return Event(event.type, event.revision, event.key, stored, prev)
