"""Where objects live in etcd: kube-apiserver's key layout.

The registry keys objects ``/<group or core>/<plural>/<namespace>/<name>``, so they sort
as kube's do (``a-b/x`` before ``a/x``).  In etcd they are kept as
kube-apiserver keeps them, so the data is where kube's tools (and ``etcdctl get --prefix
/registry/configmaps``) expect it: ``<prefix>/<resource>/<namespace>/<name>``, where
built-in resources are keyed by resource alone (with kube's special cases: services under
``services/specs``, nodes under ``minions``...) and custom resources, CRDs and APIServices
under ``<group>/<resource>``.  Both Event APIs are one resource (``events``), as in kube.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# kube's SpecialDefaultResourcePrefixes (pkg/kubeapiserver/default_storage_factory_builder.go).
_SPECIAL = {
    (b"core", b"replicationcontrollers"): b"controllers",
    (b"core", b"endpoints"): b"services/endpoints",
    (b"core", b"nodes"): b"minions",
    (b"core", b"services"): b"services/specs",
    (b"networking.platform.io", b"ingresses"): b"ingress",
}
# Built-in groups whose keys keep the group, as kube's apiextensions and aggregator do.
_GROUPED = {b"apiextensions.platform.io", b"apiregistration.platform.io"}
DEFAULT_PREFIX = "/registry"
# Records that are no served resource but that kube keeps under the prefix too: the API
# servers' address leases (apiserver/masterleases.py), at ``<prefix>/masterleases/<ip>``.
_INTERNAL = (("", "masterleases"),)


def _base(group: bytes, plural: bytes, builtin: bool) -> bytes:
    """A resource's path under the prefix: kube's special cases, then the group for the
    grouped built-in APIs and every custom resource, else the resource alone."""
    if not builtin or group in _GROUPED:
        return _SPECIAL.get((group, plural)) or group + b"/" + plural
    return _SPECIAL.get((group, plural)) or plural


def kube_key(key: bytes, builtin: bool, prefix: str = DEFAULT_PREFIX) -> str:
    """A registry key as kube names it in etcd (in its storage errors), knowing only
    whether the resource is built in."""
    _, group, plural, rest = key.split(b"/", 3)
    path = prefix.rstrip("/").encode() + b"/" + _base(group, plural, builtin)
    return (path + b"/" + rest).decode(errors="replace")


def default_kube_key(key: bytes) -> str:
    """A registry key as kube-apiserver names it under its default prefix, for a backend
    with no layout of its own (LMDB's size checks and the names of its unreadable values):
    a resource counts as built in unless its group is a custom resource's, dotted and not
    this server's own (a CRD cannot claim kube's groups).  A key that names no object
    (``/<group>/<plural>/<name>`` at least) goes under the prefix as it is."""
    parts = key.split(b"/", 3)
    if len(parts) < 4:
        return DEFAULT_PREFIX + key.decode(errors="replace")
    group = parts[1]
    return kube_key(key, builtin=b"." not in group or group.endswith(b".platform.io"))


class KeyLayout:
    """Translates registry keys to etcd keys and back."""

    def __init__(self, prefix: str, builtin: Iterable[tuple[str, str]]) -> None:
        """``builtin``: (group, plural) of the built-in resources; a mapping of them
        (enablement's ``keyed_resources``) also gives the (apiVersion, kind) each is
        stored as, for values that lack it."""
        self.root = prefix.rstrip("/").encode() + b"/"
        self._to: dict[tuple[bytes, bytes], bytes] = {}
        self._from: dict[bytes, tuple[bytes, bytes]] = {}
        kinds = builtin if isinstance(builtin, Mapping) else {}
        self._kinds: dict[tuple[bytes, bytes], tuple[str, str]] = {
            ((group or "core").encode(), plural.encode()): kind
            for (group, plural), kind in kinds.items()
        }
        for group, plural in (*builtin, *_INTERNAL):
            g = (group or "core").encode()
            p = plural.encode()
            base = _base(g, p, builtin=True)
            self._to[(g, p)] = base
            self._from[base] = (g, p)

    def etcd_key(self, key: bytes) -> bytes:
        """``/core/configmaps/ns/name`` -> ``/registry/configmaps/ns/name``."""
        _, group, plural, rest = key.split(b"/", 3)
        base = self._to.get((group, plural)) or _base(group, plural, builtin=False)
        return self.root + base + b"/" + rest

    def is_builtin(self, key: bytes) -> bool:
        """Whether a registry key is a built-in resource's (not a custom resource's)."""
        _, group, plural, _ = key.split(b"/", 3)
        return (group, plural) in self._to

    def type_of(self, key: bytes) -> tuple[str, str] | None:
        """(apiVersion, kind) of a built-in resource's objects, for a stored value that
        does not say (kube decodes it into the resource's Go type); None otherwise."""
        _, group, plural, _ = key.split(b"/", 3)
        return self._kinds.get((group, plural))

    def registry_key(self, etcd_key: bytes) -> bytes | None:
        """The registry key of an etcd key, or None for keys that are not objects."""
        if not etcd_key.startswith(self.root):
            return None
        rest = etcd_key[len(self.root) :]
        parts = rest.split(b"/")
        for width in (2, 1):  # services/specs before services, then plain resources
            base = b"/".join(parts[:width])
            if base in self._from:
                group, plural = self._from[base]
                return self._join(group, plural, parts[width:])
        if len(parts) >= 3 and b"." in parts[0]:  # <group>/<resource>/...: custom resources
            return self._join(parts[0], parts[1], parts[2:])
        return None

    @staticmethod
    def _join(group: bytes, plural: bytes, tail: list[bytes]) -> bytes | None:
        if len(tail) == 1 and tail[0]:
            return b"/" + group + b"/" + plural + b"/" + tail[0]
        if len(tail) == 2 and tail[0] and tail[1]:
            return b"/" + group + b"/" + plural + b"/" + tail[0] + b"/" + tail[1]
        return None
