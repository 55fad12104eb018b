"""ClusterTrustBundleAttest: a ClusterTrustBundle that names a signer needs ``attest``
for it.

kube v1.36 serves ClusterTrustBundles only with the ClusterTrustBundle feature gate
and its beta API switched on, and this server does not serve the kind at all; the
plugin is therefore inert (as kube's is with the gate off) until a
``certificates.platform.io`` ``clustertrustbundles`` store exists, and then checks as
kube does.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.certificates import GROUP, authorized_for_signer
from platform_api.admission.interface import Attributes
from platform_api.admission.matching import Authorize
from platform_api.admission.plugins import PluginContext

Obj = dict[str, Any]
BUNDLES = "clustertrustbundles"
_GC_FIELDS = ("ownerReferences", "finalizers")


def only_gc_fields_changed(obj: Obj, old: Obj) -> bool:
    """Whether an update touches nothing but owner references and finalizers (kube
    lets garbage collection and storage migration through unchecked)."""

    def rest(o: Obj) -> Obj:
        meta = {
            k: v
            for k, v in (o.get("metadata") or {}).items()
            if k not in (*_GC_FIELDS, "resourceVersion", "managedFields")
        }
        return {**o, "metadata": meta}

    return rest(obj) == rest(old)


class ClusterTrustBundleAttest:
    name = "ClusterTrustBundleAttest"
    resources = frozenset({(GROUP, BUNDLES)})

    def __init__(self, authorize: Authorize, enabled: bool) -> None:
        self._authorize = authorize
        self.enabled = enabled

    async def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if (
            not self.enabled
            or attrs.operation not in ("CREATE", "UPDATE")
            or (rt.group, rt.plural) != (GROUP, BUNDLES)
            or obj is None
        ):
            return
        signer = (obj.get("spec") or {}).get("signerName") or ""
        if not signer:
            return
        if attrs.operation == "UPDATE" and old is not None and only_gc_fields_changed(obj, old):
            return
        if not await authorized_for_signer(self._authorize, attrs.user, "attest", signer):
            raise errors.forbidden(
                BUNDLES,
                GROUP,
                attrs.name,
                f'user not permitted to attest for signerName "{signer}"',
            )


def build(ctx: PluginContext) -> ClusterTrustBundleAttest:
    served = any(group == GROUP and plural == BUNDLES for group, _, plural in ctx.stores)
    return ClusterTrustBundleAttest(ctx.authorize, served)
