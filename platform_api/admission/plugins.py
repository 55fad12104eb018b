"""Admission plugin names: the ``--enable-admission-plugins`` and ``--disable-admission-plugins`` rules.

kube's names and defaults for the plugins this server runs; the rest of kube's plugins
are known by name so that asking for one says it is missing here rather than unknown.
The service-IP allocator is not among them: in kube it is part of the Service store, so
it cannot be switched off.
"""

from __future__ import annotations

from platform_api.apiserver.flagvalues import ConfigError, parse_list

# The plugins this server implements, in kube's order, with whether they are on by default.
IMPLEMENTED: dict[str, bool] = {
    "NamespaceLifecycle": True,
    "NodeRestriction": False,
    "MutatingAdmissionWebhook": True,
    "ValidatingAdmissionPolicy": True,
    "ValidatingAdmissionWebhook": True,
}
# kube-apiserver's other plugins (pkg/kubeapiserver/options/plugins.go).
KUBE_ONLY = frozenset(
    (
        "AlwaysAdmit",
        "AlwaysDeny",
        "AlwaysPullImages",
        "CertificateApproval",
        "CertificateSigning",
        "CertificateSubjectRestriction",
        "ClusterTrustBundleAttest",
        "DefaultIngressClass",
        "DefaultStorageClass",
        "DefaultTolerationSeconds",
        "DenyServiceExternalIPs",
        "EventRateLimit",
        "ExtendedResourceToleration",
        "ImagePolicyWebhook",
        "LimitPodHardAntiAffinityTopology",
        "LimitRanger",
        "MutatingAdmissionPolicy",
        "NamespaceAutoProvision",
        "NamespaceExists",
        "OwnerReferencesPermissionEnforcement",
        "PersistentVolumeClaimResize",
        "PodNodeSelector",
        "PodSecurity",
        "PodTolerationRestriction",
        "PodTopologyLabels",
        "Priority",
        "ResourceQuota",
        "RuntimeClass",
        "ServiceAccount",
        "StorageObjectInUseProtection",
        "TaintNodesByCondition",
    )
)


def parse(enable: str | None, disable: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two flags' lists, checked with kube's messages; the first error is raised."""
    enabled, disabled = parse_list(enable), parse_list(disable)
    for flag, names in (("enable", enabled), ("disable", disabled)):
        for name in names:
            if name in IMPLEMENTED:
                continue
            if name not in KUBE_ONLY:
                raise ConfigError(f'{flag}-admission-plugins plugin "{name}" is unknown')
            if flag == "enable":  # disabling a plugin that never runs here asks for nothing
                raise ConfigError(
                    f'enable-admission-plugins plugin "{name}" is not available in this server '
                    f"(available: {', '.join(IMPLEMENTED)})"
                )
    overlap = sorted(set(enabled) & set(disabled))
    if overlap:
        raise ConfigError(
            f"[{' '.join(overlap)}] in enable-admission-plugins and disable-admission-plugins "
            "overlapped"
        )
    return enabled, disabled


def enabled_plugins(enable: tuple[str, ...], disable: tuple[str, ...]) -> tuple[str, ...]:
    """The plugins to run, in order: defaults, plus enabled, minus disabled."""
    return tuple(
        name
        for name, default in IMPLEMENTED.items()
        if (default or name in enable) and name not in disable
    )
