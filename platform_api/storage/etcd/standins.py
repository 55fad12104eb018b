"""An unsafe delete's stand-in, carried to every replica through etcd.

kube's unsafe delete removes a value nothing can decode; watchers are shown a stand-in
(the object's kind and name) as the deleted object.  No replica can derive it from the
value, so the deleting one writes it under ``<prefix>/platform-stand-ins/<key>`` in the
delete's own transaction, ahead of the delete: every replica's watch sees the two at one
revision and pairs them.  The key is no object's (its first segment names no resource
and has no dot), so loads, re-lists and migrations pass over it.
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import object_json
from platform_api.storage.etcd.kv import KeyValue, delete_op, put_op
from platform_api.storage.etcd.layout import KeyLayout
from platform_api.storage.interface import Stored

STAND_INS = b"platform-stand-ins/"


class StandIns:
    def __init__(self, layout: KeyLayout) -> None:
        self.layout = layout
        self.root = layout.root + STAND_INS

    def note_key(self, etcd_key: bytes) -> bytes:
        """Where the stand-in of ``etcd_key``'s delete is written."""
        return self.root + etcd_key[len(self.layout.root) :]

    def delete_ops(self, etcd_key: bytes, stand_in: dict[str, Any]) -> list[Any]:
        """The transaction's operations: the stand-in, then the delete."""
        return [put_op(self.note_key(etcd_key), object_json(stand_in)), delete_op(etcd_key)]

    def read(self, kv: KeyValue, into: dict[bytes, Stored]) -> None:
        """A watched write of a stand-in: kept in ``into`` by the key it stands for."""
        if not kv.key.startswith(self.root):
            return
        target = self.layout.registry_key(self.layout.root + kv.key[len(self.root) :])
        if target is not None:
            into[target] = Stored(target, kv.mod_revision, kv.value)
