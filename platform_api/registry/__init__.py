"""Registry: the generic store and the per-kind strategies it applies."""

from platform_api.registry import (  # noqa: F401  (registers strategies)
    admissionpolicy,
    admissionregistration,
    apiextensions,
    apiregistration,
    apps,
    certificates,
    coordination,
    core,
    csinode,
    discovery,
    events,
    flowcontrol,
    ingress,
    limitrange,
    mutatingpolicy,
    node,
    policies,
    quota,
    rbac,
    scheduling,
)
