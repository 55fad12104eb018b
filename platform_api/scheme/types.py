"""What the server knows about one resource type: names, scope, verbs, sub-resources."""

from __future__ import annotations

from dataclasses import dataclass, field

BRAND_SUFFIX = ".platform.io"
UPSTREAM_SUFFIX = ".k8s.io"

# Verbs of a full object resource, in the order kube's discovery lists them.
OBJECT_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")
# A custom resource's, in the order kube's CRD discovery lists them; while its definition
# terminates, discovery lists only those that neither create nor change (kube refuses a
# create then, and takes updates: finalizers must still come off).
CUSTOM_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
TERMINATING_VERBS = ("delete", "deletecollection", "get", "list", "watch")


def rebrand_group(group: str) -> str:
    """``rbac.authorization.k8s.io`` -> ``rbac.authorization.platform.io``."""
    if group.endswith(UPSTREAM_SUFFIX):
        return group[: -len(UPSTREAM_SUFFIX)] + BRAND_SUFFIX
    return group


def upstream_group(group: str) -> str:
    """The inverse of ``rebrand_group``, for lookups in upstream schema data."""
    if group.endswith(BRAND_SUFFIX):
        return group[: -len(BRAND_SUFFIX)] + UPSTREAM_SUFFIX
    return group


def outbound_group(group: str, upstream: bool) -> str:
    """The group of a document this server sends out (a webhook's review, an audit Event):
    kube's name under --serve-upstream-groups, so stock receivers decode it."""
    return upstream_group(group) if upstream else group


def group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def api_path(group: str, version: str) -> str:
    """Where a group version is served: ``/api/v1`` for the core group, else ``/apis/...``."""
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


# Go packages of internal types whose name is not their group's (``events.k8s.io``'s
# Event is ``core.Event``); every other is the group's first label.
_INTERNAL_PACKAGES = {"events": "core"}


def internal_type_name(group: str, kind: str) -> str:
    """Go's name of a built-in kind's internal type, as kube's storage spans carry it
    (``*core.ConfigMap`` for group "" or "core", ``*rbac.Role``)."""
    label = group.partition(".")[0] if group else "core"
    return f"*{_INTERNAL_PACKAGES.get(label, label)}.{kind}"


def internal_package(definition: str) -> str:
    """The Go package of a built-in kind's internal type, as kube's messages name it
    (``core`` for ``io.platform.api.core.v1.ConfigMap``)."""
    label = definition.split(".")[-3]
    return _INTERNAL_PACKAGES.get(label, label)


@dataclass(frozen=True)
class Subresource:
    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str = ""  # of the kind, when it differs from the parent (autoscaling Scale)
    version: str = ""


@dataclass(frozen=True)
class ResourceType:
    """One served resource: ``/apis/<group>/<version>/<plural>``."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = OBJECT_VERBS
    subresources: tuple[Subresource, ...] = ()
    # Name rule for metadata.name: "subdomain", "label" or "path-segment".
    name_rule: str = "subdomain"
    # OpenAPI definition of the kind (rebranded name), filled by the scheme.
    definition: str = field(default="", compare=False)
    # The version objects are stored at, when not this one (custom resources).
    storage_version: str = ""
    # Served from a CustomResourceDefinition: unstructured, schema from the CRD.
    custom: bool = False
    # Kept in storage; False for those answered and never stored (reviews, bindings):
    # kube's discovery gives them no storageVersionHash.
    stored: bool = True
    # A warning for every request to this version (a CRD's deprecationWarning).
    deprecation_warning: str | None = None
    # Its CustomResourceDefinition is being deleted.
    terminating: bool = False

    @property
    def api_version(self) -> str:
        return group_version(self.group, self.version)

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def qualified(self) -> str:
        """``deployments.apps``: how messages and RBAC name the resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None

    def gvk(self, subresource: str = "") -> tuple[str, str, str]:
        """The (group, version, kind) of what the resource (or its ``subresource``) takes."""
        sub = self.subresource(subresource) if subresource else None
        if sub is None:
            return self.group, self.version, self.kind
        if sub.version:
            return sub.group, sub.version, sub.kind
        return self.group, self.version, sub.kind

    def has_status(self) -> bool:
        return self.subresource("status") is not None

    def supports(self, verb: str) -> bool:
        return verb in self.verbs

    def listed_verbs(self) -> list[str]:
        """The verbs discovery lists."""
        return list(TERMINATING_VERBS if self.terminating else self.verbs)
