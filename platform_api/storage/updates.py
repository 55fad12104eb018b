"""The step every backend's ``guaranteed_update`` repeats on each try: run the update.

Preconditions are checked on the state the update is about to replace; an update that
leaves the object as it is writes nothing (its resourceVersion stays), unless the stored
value is stale (read with an old encryption key: kube's storage migration rewrites it).
Decoding the current object and comparing the result with it walk both whole objects:
for a large request they run on its thread (platform_api/heavy.py).
"""

from __future__ import annotations

from inspect import isawaitable
from typing import Any

from platform_api import heavy
from platform_api.storage.interface import (
    INVALID_OBJECT,
    Preconditions,
    StorageError,
    Stored,
    TryUpdate,
)
from platform_api.storage.transformer import StaleStored


async def next_state(
    key: bytes, current: Stored | None, try_update: TryUpdate, preconditions: Preconditions | None
) -> dict[str, Any] | None:
    """The object ``try_update`` makes of ``current``; None when nothing is to be written."""
    obj = await heavy.run(current.copy) if current is not None else None
    if obj is not None and preconditions is not None:
        why = preconditions.failure(obj)
        if why:
            raise StorageError(INVALID_OBJECT, key, why)
    new = try_update(obj, current)
    if isawaitable(new):
        new = await new
    if current is None or isinstance(current, StaleStored):
        return new
    return None if await heavy.run(_unchanged, new, current) else new


def _unchanged(new: Any, current: Stored) -> bool:
    return bool(new == current.object)
