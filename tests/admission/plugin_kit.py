"""What the cluster-plugin tests share: real stores over a temporary LMDB, and Attributes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from twisted.internet.defer import Deferred, ensureDeferred, succeed
from twisted.internet.task import Clock

from platform_api.admission.interface import Attributes
from platform_api.authentication.user import UserInfo
from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]
SCHEME = builtin_scheme()
ADMIN = UserInfo("admin", groups=("system:masters",))


def rt(plural: str, group: str = "") -> Any:
    found = SCHEME.lookup(group, "v1", plural)
    assert found is not None
    return found


class Cluster:
    """Stores for every built-in kind over one storage; ``create`` commits at once."""

    def __init__(self, path: str) -> None:
        self.storage = LMDBStorage(open_environment(path, 64 * 2**20), lambda w: succeed(w()))
        self.stores = {(r.group, r.version, r.plural): Store(r, self.storage) for r in SCHEME.all()}
        self.clock = Clock()
        self.hub = WatchHub(self.storage, self.clock)  # for plugins that keep informers
        self.storage.on_commit = self.hub.committed

    def settle(self) -> None:
        """Publish the commits so far, as the server does before its next request."""
        self.clock.advance(0)

    def store(self, plural: str, group: str = "") -> Store:
        return self.stores[(group, "v1", plural)]

    def create(self, plural: str, obj: Obj, group: str = "", namespace: str = "") -> Obj:
        created: Obj = run(self.store(plural, group).create(namespace, obj))
        return created


def run(pending: Any) -> Any:
    """The result of a coroutine that completes without waiting on the reactor."""
    d: Deferred[Any] = ensureDeferred(pending)
    out: list[Any] = []
    d.addBoth(out.append)
    assert out, "did not complete synchronously"
    if isinstance(out[0], Exception) or hasattr(out[0], "raiseException"):
        out[0].raiseException()
    return getattr(out[0], "object", out[0])


def attrs(
    op: str,
    plural: str,
    name: str = "",
    *,
    group: str = "",
    sub: str = "",
    namespace: str | None = None,
    user: UserInfo = ADMIN,
    dry_run: bool = False,
) -> Attributes:
    resource = rt(plural, group)
    ns = namespace if namespace is not None else ("default" if resource.namespaced else "")
    return Attributes(op, resource, sub, ns, name, user, dry_run)


def refused(call: Callable[[], Any]) -> StatusError:
    with pytest.raises(StatusError) as caught:
        result = call()
        if result is not None:
            run(result)
    return caught.value
