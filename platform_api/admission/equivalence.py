"""``matchPolicy: Equivalent``: a webhook or policy that names one version of a resource
sees requests to its other versions too, converted to the version it named.

The equivalents of a resource are its other served versions (kube's
EquivalentResourceMapper: here, a custom resource's versions, which share one storage).
As kube's VersionedAttributes, the object and old object are converted to the matched
version (with the CRD's converter, a conversion webhook included); ``kind`` and
``resource`` then name the matched version and ``requestKind``/``requestResource`` what
the client asked for.  A webhook's or policy's change is converted back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from platform_api.admission.request import AdmissionRequest
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import group_version

Obj = dict[str, Any]
# (object, apiVersion) -> the object in that version.
Convert = Callable[[Obj, str], Awaitable[Obj]]


class VersionError(ValueError):
    """A patched custom resource's apiVersion that does not convert (kube's words)."""


@dataclass(frozen=True)
class Target:
    """The version of a resource a rule matched, and the kind it takes there."""

    group: str
    version: str
    resource: str
    kind: tuple[str, str, str]


def requested(req: AdmissionRequest) -> Target:
    """The version the client asked for."""
    return Target(req.group, req.version, req.resource, req.kind)


class Equivalence:
    """The other versions of a request's resource, and conversion between them."""

    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        # (group, plural) -> its converter; the CRD installer keeps it current.  A
        # resource with none differs between versions only in apiVersion.
        self.converters: dict[tuple[str, str], Convert] = {}

    def equivalents(self, req: AdmissionRequest) -> list[Target]:
        """The request's resource at its other served versions, in the order served."""
        found = []
        for rt in self.scheme.equivalents(req.group, req.version, req.resource):
            if rt.version == req.version:
                continue
            if req.subresource and rt.subresource(req.subresource) is None:
                continue
            found.append(Target(rt.group, rt.version, rt.plural, rt.gvk(req.subresource)))
        return found

    async def _convert(self, req: AdmissionRequest, obj: Obj | None, kind: tuple) -> Obj | None:
        api_version = group_version(kind[0], kind[1])
        if obj is None or obj.get("apiVersion") == api_version:
            return obj  # e.g. a Scale: autoscaling/v1 whatever the parent's version
        convert = self.converters.get((req.group, req.resource))
        if convert is None:
            return {**obj, "apiVersion": api_version}
        return await convert(obj, api_version)

    async def versioned(self, req: AdmissionRequest, target: Target) -> AdmissionRequest:
        """``req`` as seen at ``target`` (``req`` itself when that is what was asked)."""
        if target == requested(req):
            return req
        return dataclasses.replace(
            req,
            group=target.group,
            version=target.version,
            resource=target.resource,
            kind=target.kind,
            object=await self._convert(req, req.object, target.kind),
            old_object=await self._convert(req, req.old_object, target.kind),
            request_kind=req.kind,
            request_resource=(req.group, req.version, req.resource),
        )

    async def read_back(self, req: AdmissionRequest, obj: Obj) -> Obj:
        """A custom resource a webhook or policy patched into another apiVersion, back in
        ``req``'s as kube's converter takes it: one of the resource's versions converts,
        anything else is kube's conversion error (VersionError, its words).  Built-in
        kinds are the typed decoder's (``scheme.readback``)."""
        group, version, kind = req.kind
        api_version = group_version(group, version)
        sent = obj.get("apiVersion")
        if sent == api_version or (req.group, req.resource) not in self.converters:
            return obj
        if not sent:
            raise VersionError(
                f'/, Kind={kind} is unstructured and is not suitable for converting to "{api_version}"'
            )
        served = self.scheme.equivalents(req.group, req.version, req.resource)
        if sent not in {group_version(rt.group, rt.version) for rt in served}:
            raise VersionError(f"request to convert CR from an invalid group/version: {sent}")
        converted = await self._convert(req, obj, req.kind)
        assert converted is not None
        return converted

    async def restore(self, req: AdmissionRequest, versioned: AdmissionRequest) -> Obj | None:
        """``versioned``'s object converted back to the version ``req`` asked for."""
        if versioned is req:
            return req.object
        return await self._convert(req, versioned.object, req.kind)
