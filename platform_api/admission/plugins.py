"""Admission plugin names: the ``--enable-admission-plugins`` and ``--disable-admission-plugins`` rules.

kube-apiserver v1.36's plugins in its order (pkg/kubeapiserver/options/plugins.go), with
whether each is on by default and the module that builds it here.  A plugin without a
module is known by name, so that asking for one says it is missing here rather than
unknown.  Each module has ``build(ctx: PluginContext) -> AdmissionPlugin``; the webhook
and policy plugins are built by ``admission/webhook`` and ``admission/policy`` instead.
The service-IP allocator is not among them: in kube it is part of the Service store, so
it cannot be switched off.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from platform_api.apiserver.flagvalues import ConfigError, parse_list

if TYPE_CHECKING:
    from platform_api.admission.interface import AdmissionPlugin
    from platform_api.admission.matching import Authorize
    from platform_api.apiserver.config import ServerConfig
    from platform_api.registry.store import Store
    from platform_api.storage.interface import Storage
    from platform_api.storage.watch import WatchHub

# Built by the chain's webhook and policy parts, not by a plugin module.
CHAIN_PARTS = frozenset(
    (
        "MutatingAdmissionPolicy",
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook",
    )
)
_A = "platform_api.admission."

# name: (on by default, module or None when not built here), in kube's order.
PLUGINS: dict[str, tuple[bool, str | None]] = {
    "AlwaysAdmit": (False, _A + "alwaysadmit"),
    "NamespaceAutoProvision": (False, _A + "namespaces.autoprovision"),
    "NamespaceLifecycle": (True, _A + "lifecycle"),
    "NamespaceExists": (False, _A + "namespaces.exists"),
    "LimitPodHardAntiAffinityTopology": (False, _A + "antiaffinity"),
    "LimitRanger": (True, _A + "limitranger"),
    "ServiceAccount": (True, _A + "serviceaccount"),
    "NodeRestriction": (False, _A + "noderestriction"),
    "TaintNodesByCondition": (True, _A + "nodetaint"),
    "AlwaysPullImages": (False, _A + "alwayspullimages"),
    "ImagePolicyWebhook": (False, _A + "imagepolicy"),
    "PodSecurity": (True, _A + "podsecurity.plugin"),
    "PodNodeSelector": (False, _A + "podnodeselector"),
    "Priority": (True, _A + "priority"),
    "DefaultTolerationSeconds": (True, _A + "defaulttolerationseconds"),
    "PodTolerationRestriction": (False, _A + "podtolerationrestriction"),
    "EventRateLimit": (False, _A + "eventratelimit"),
    "ExtendedResourceToleration": (False, _A + "extendedresourcetoleration"),
    "DefaultStorageClass": (True, _A + "storage.defaultclass"),
    "StorageObjectInUseProtection": (True, _A + "storage.protection"),
    "PodGroupProtection": (True, _A + "gated.podgroupprotection"),
    "OwnerReferencesPermissionEnforcement": (False, _A + "ownerrefs"),
    "PersistentVolumeClaimResize": (True, _A + "storage.resize"),
    "RuntimeClass": (True, _A + "runtimeclass"),
    "CertificateApproval": (True, _A + "certificates.approval"),
    "CertificateSigning": (True, _A + "certificates.signing"),
    "ClusterTrustBundleAttest": (True, _A + "certificates.ctbattest"),
    "CertificateSubjectRestriction": (True, _A + "certificates.subjectrestriction"),
    "DefaultIngressClass": (True, _A + "defaultingressclass"),
    "DenyServiceExternalIPs": (False, _A + "denyexternalips"),
    "PodTopologyLabels": (True, _A + "podtopologylabels"),
    "PodGroupWorkloadExists": (True, _A + "gated.podgroupworkload"),
    "NodeDeclaredFeatureValidator": (True, _A + "nodefeatures"),
    "JobValidation": (True, _A + "gated.jobvalidation"),
    "PodResizeValidator": (True, _A + "gated.podresize"),
    "MutatingAdmissionPolicy": (True, "chain"),
    "MutatingAdmissionWebhook": (True, "chain"),
    "ValidatingAdmissionPolicy": (True, "chain"),
    "ValidatingAdmissionWebhook": (True, "chain"),
    "ResourceQuota": (True, _A + "quota.plugin"),
    "AlwaysDeny": (False, _A + "alwaysdeny"),
}


def available() -> tuple[str, ...]:
    """The plugins this server can run, in kube's order."""
    return tuple(name for name, (_, module) in PLUGINS.items() if module is not None)


@dataclass(frozen=True)
class PluginContext:
    """What a plugin module's ``build`` may use: reads go through ``storage`` and the
    stores (``stores[(group, version, plural)]``), writes through the stores."""

    config: ServerConfig
    storage: Storage
    hub: WatchHub
    stores: dict[tuple[str, str, str], Store]
    reactor: Any
    authorize: Authorize
    # Each plugin's AdmissionConfiguration entry (--admission-control-config-file).
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def plugin_settings(self, name: str) -> dict[str, Any] | None:
        """The plugin's configuration object, or None when the file names none."""
        return self.settings.get(name)


def build_plugin(name: str, ctx: PluginContext) -> AdmissionPlugin:
    module = PLUGINS[name][1]
    assert module is not None and module != "chain", name
    build: Callable[[PluginContext], AdmissionPlugin] = importlib.import_module(module).build
    return build(ctx)


def parse(enable: str | None, disable: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two flags' lists, checked with kube's messages; the first error is raised."""
    enabled, disabled = parse_list(enable), parse_list(disable)
    here = available()
    for flag, names in (("enable", enabled), ("disable", disabled)):
        for name in names:
            if name not in PLUGINS:
                raise ConfigError(f'{flag}-admission-plugins plugin "{name}" is unknown')
            if flag == "enable" and name not in here:
                # disabling a plugin that never runs here asks for nothing
                raise ConfigError(
                    f'enable-admission-plugins plugin "{name}" is not available in this server '
                    f"(available: {', '.join(here)})"
                )
    overlap = sorted(set(enabled) & set(disabled))
    if overlap:
        raise ConfigError(
            f"[{' '.join(overlap)}] in enable-admission-plugins and disable-admission-plugins "
            "overlapped"
        )
    return enabled, disabled


def enabled_plugins(enable: tuple[str, ...], disable: tuple[str, ...]) -> tuple[str, ...]:
    """The plugins to run, in kube's order: defaults, plus enabled, minus disabled."""
    return tuple(
        name
        for name, (default, module) in PLUGINS.items()
        if module is not None and (default or name in enable) and name not in disable
    )
