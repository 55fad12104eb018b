"""kube's warnings on pods and pod templates (``pkg/api/pod/warnings.go``).

What a write is told it got wrong without being refused: deprecated node labels,
annotations and volume plugins, paths two volume items both write, duplicate
environment variables that apply would drop, ports that clash or say nothing, fractions
of a byte, null selectors that match nothing.  kubectl prints each as ``Warning: ...``.
The object has passed validation when it is warned of: its lists hold objects.
A pod is warned of on create only (kube skips the updates, a kubelet's hot path); a
workload of its template when a write changes its generation.
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import quote
from platform_api.registry.claimupdate import claim_spec_warnings, fractional_bytes
from platform_api.registry.gateddrops import GIT_REPO_VOLUME_DRIVER, GateCheck
from platform_api.registry.node import DEPRECATED_NODE_LABELS
from platform_api.registry.podannotations import (
    APPARMOR_CONTAINER,
    SECCOMP_CONTAINER,
    SECCOMP_POD,
    apparmor_field,
    containers,
)
from platform_api.registry.podvolumepaths import overlapping_paths
from platform_api.validation.ips import ip_warnings
from platform_api.validation.names import is_dns1123_label, is_label_value

Obj = dict[str, Any]

NULL_SELECTOR = "a null labelSelector results in matching no pod"
_BYTES = ("memory", "ephemeral-storage")  # resources counted in whole bytes
_SYSCTLS = 'non-functional in v1.11+; use the "sysctls" field instead'
DEPRECATED_ANNOTATIONS = {
    "scheduler.alpha.platform.io/critical-pod": (
        'non-functional in v1.16+; use the "priorityClassName" field instead'
    ),
    "security.alpha.platform.io/sysctls": _SYSCTLS,
    "security.alpha.platform.io/unsafe-sysctls": _SYSCTLS,
}
_GONE_25 = "deprecated in v1.22, non-functional in v1.25+"
_GONE_31 = "deprecated in v1.28, non-functional in v1.31+"
DEPRECATED_VOLUMES = {
    "photonPersistentDisk": "deprecated in v1.11, non-functional in v1.16+",
    "scaleIO": "deprecated in v1.16, non-functional in v1.22+",
    "flocker": _GONE_25,
    "storageos": _GONE_25,
    "quobyte": _GONE_25,
    "glusterfs": "deprecated in v1.25, non-functional in v1.26+",
    "cephfs": _GONE_31,
    "rbd": _GONE_31,
}
# kube names the field by its Go name in this warning: storageOS
_VOLUME_FIELD = {"storageos": "storageOS"}
_VOLUME_ORDER = (
    "photonPersistentDisk",
    "gitRepo",
    "scaleIO",
    "flocker",
    "storageos",
    "quobyte",
    "glusterfs",
    "ephemeral",
    "cephfs",
    "rbd",
)


def template_warnings(template: Any, path: str, gates: GateCheck) -> list[str]:
    """GetWarningsForPodTemplate: ``path`` is where the template sits."""
    if not isinstance(template, dict):
        return []
    return spec_and_meta_warnings(
        template.get("spec") or {}, template.get("metadata") or {}, path + ".", gates
    )


def spec_and_meta_warnings(spec: Obj, meta: Obj, at: str, gates: GateCheck) -> list[str]:
    """warningsForPodSpecAndMeta; ``at`` prefixes every path ("" for a pod)."""
    annotations = meta.get("annotations") or {}
    warnings = _node_label_warnings(spec, at)
    warnings += [
        f"{at}metadata.annotations[{key}]: {message}"
        for key, message in DEPRECATED_ANNOTATIONS.items()
        if key in annotations
    ]
    warnings += _volume_warnings(spec.get("volumes") or [], at, gates)
    warnings += overlapping_paths(spec.get("volumes") or [])
    warnings += _duplicates(spec.get("hostAliases") or [], "ip", f"{at}spec.hostAliases", "ip")
    secrets = spec.get("imagePullSecrets") or []
    warnings += _duplicates(secrets, "name", f"{at}spec.imagePullSecrets", "name")
    warnings += [
        f'{at}spec.imagePullSecrets[{i}].name: invalid empty name ""'
        for i, item in enumerate(secrets)
        if not (item or {}).get("name")
    ]
    overhead = spec.get("overhead") or {}
    warnings += fractional_bytes(overhead, f"{at}spec.overhead", _BYTES)
    if not (spec.get("securityContext") or {}).get("seccompProfile") and SECCOMP_POD in annotations:
        warnings.append(
            f"{at}metadata.annotations[{SECCOMP_POD}]: "
            'non-functional in v1.27+; use the "seccompProfile" field instead'
        )
    for container, where in containers(spec, f"{at}spec"):
        warnings += _container_warnings(container, where, spec, annotations, at)
    warnings += _port_warnings(spec, f"{at}spec")
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0:
        warnings.append(
            f"{at}spec.terminationGracePeriodSeconds: must be >= 0; negative values are "
            "invalid and will be treated as 1"
        )
    warnings += _affinity_warnings(spec.get("affinity") or {}, f"{at}spec.affinity")
    nameservers = (spec.get("dnsConfig") or {}).get("nameservers") or []
    for i, server in enumerate(nameservers):
        warnings += ip_warnings(server, f"{at}spec.dnsConfig.nameservers[{i}]")
    for i, alias in enumerate(spec.get("hostAliases") or []):
        warnings += ip_warnings((alias or {}).get("ip") or "", f"{at}spec.hostAliases[{i}].ip")
    return warnings


def _node_label_warnings(spec: Obj, at: str) -> list[str]:
    """Deprecated node labels in the node selector, node affinity and spread keys."""
    warnings = [
        f"{at}spec.nodeSelector[{key}]: {DEPRECATED_NODE_LABELS[key]}"
        for key in sorted(spec.get("nodeSelector") or {})
        if key in DEPRECATED_NODE_LABELS
    ]
    node = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    base = f"{at}spec.affinity.nodeAffinity"
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for i, term in enumerate(required.get("nodeSelectorTerms") or []):
        where = f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"
        warnings += _term_warnings(term or {}, False, where)
    for i, weighted in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        where = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"
        warnings += _term_warnings((weighted or {}).get("preference") or {}, True, where)
    for i, constraint in enumerate(spec.get("topologySpreadConstraints") or []):
        where = f"{at}spec.topologySpreadConstraints[{i}]"
        key = (constraint or {}).get("topologyKey") or ""
        if key in DEPRECATED_NODE_LABELS:
            warnings.append(f"{where}.topologyKey: {key} is {DEPRECATED_NODE_LABELS[key]}")
        if (constraint or {}).get("labelSelector") is None:
            warnings.append(f"{where}.labelSelector: {NULL_SELECTOR}")
    return warnings


def _term_warnings(term: Obj, check_values: bool, at: str) -> list[str]:
    """GetWarningsForNodeSelectorTerm."""
    warnings = []
    for i, expression in enumerate(term.get("matchExpressions") or []):
        key = (expression or {}).get("key") or ""
        if key in DEPRECATED_NODE_LABELS:
            message = DEPRECATED_NODE_LABELS[key]
            warnings.append(f"{at}.matchExpressions[{i}].key: {key} is {message}")
        if check_values:
            for j, value in enumerate((expression or {}).get("values") or []):
                warnings += [
                    f"{at}.matchExpressions[{i}].values[{j}]: {value} is invalid, {problem}"
                    for problem in is_label_value(value)
                ]
    return warnings


def _volume_warnings(volumes: list[Any], at: str, gates: GateCheck) -> list[str]:
    """Deprecated and removed volume plugins, and ephemeral volumes' claim templates, in
    kube's order of the sources."""
    warnings = []
    for i, volume in enumerate(volumes):
        where = f"{at}spec.volumes[{i}]"
        for source in _VOLUME_ORDER:
            if volume.get(source) is None:
                continue
            if source == "gitRepo":
                off = "" if gates(GIT_REPO_VOLUME_DRIVER) else ", and disabled by default in v1.33+"
                warnings.append(f"{where}.gitRepo: deprecated in v1.11{off}")
            elif source == "ephemeral":
                template = volume["ephemeral"].get("volumeClaimTemplate")
                if template is not None:
                    claim_at = f"{where}.ephemeral.volumeClaimTemplate.spec"
                    warnings += claim_spec_warnings(template.get("spec") or {}, claim_at)
            else:
                name = _VOLUME_FIELD.get(source, source)
                warnings.append(f"{where}.{name}: {DEPRECATED_VOLUMES[source]}")
    return warnings


def _duplicates(items: list[Any], key: str, at: str, name: str) -> list[str]:
    """hostAliases' ips and imagePullSecrets' names, each warned of past its first."""
    seen: set[Any] = set()
    warnings = []
    for i, item in enumerate(items):
        value = (item or {}).get(key) or ""
        if value in seen:
            warnings.append(f"{at}[{i}].{name}: duplicate {name} {quote(value)}")
        seen.add(value)
    return warnings


def _container_warnings(
    container: Obj, at: str, spec: Obj, annotations: Obj, top: str
) -> list[str]:
    name = container.get("name") or ""
    context = container.get("securityContext") or {}
    warnings = []
    if not context.get("seccompProfile") and SECCOMP_CONTAINER + name in annotations:
        warnings.append(
            f"{top}metadata.annotations[{SECCOMP_CONTAINER}{name}]: "
            'non-functional in v1.27+; use the "seccompProfile" field instead'
        )
    # pods are told through the AppArmor version skew instead: templates only
    key = APPARMOR_CONTAINER + name
    if top and not context.get("appArmorProfile") and key in annotations:
        pod_profile = (spec.get("securityContext") or {}).get("appArmorProfile")
        if pod_profile is None or pod_profile != apparmor_field(annotations[key], checked=False):
            warnings.append(
                f"{top}metadata.annotations[{key}]: "
                'deprecated since v1.30; use the "appArmorProfile" field instead'
            )
    resources = container.get("resources") or {}
    for resource in _BYTES:
        for kind in ("limits", "requests"):
            amounts = resources.get(kind) or {}
            warnings += fractional_bytes(amounts, f"{at}.resources.{kind}", (resource,))
    return warnings + _env_warnings(container.get("env") or [], at)


def _env_warnings(variables: list[Any], at: str) -> list[str]:
    """A variable named again hides the first; apply may drop it, unless the later one
    builds on the earlier one (``X=$(X)more``)."""
    if len(variables) < 2:
        return []
    seen: set[str] = set()
    warnings = []
    for i, variable in enumerate(variables):
        name = variable.get("name") or ""
        if name not in seen:
            seen.add(name)
            continue
        ref, value = f"$({name})", variable.get("value") or ""
        if variable.get("valueFrom") is not None or value == ref or ref not in value:
            warnings.append(
                f"{at}.env[{i}]: hides previous definition of {quote(name)}, which may be "
                "dropped when using apply"
            )
    return warnings


def _port_warnings(spec: Obj, at: str) -> list[str]:
    """Ports across all containers: a host IP with no host port, the same port twice or
    overlapping; then port names used twice."""
    warnings = []
    taken: dict[str, list[tuple[str, Obj]]] = {}
    for container, where in containers(spec, at):
        for i, port in enumerate(container.get("ports") or []):
            here = f"{where}.ports[{i}]"
            host_ip, host_port = port.get("hostIP") or "", port.get("hostPort") or 0
            if host_ip and not host_port:
                warnings.append(f"{here}: hostIP set without hostPort: {_go_port(port)}")
            key = f"{port.get('containerPort') or 0}/{port.get('protocol') or ''}"
            for other_at, other in taken.get(key, []):
                warnings += _clash(here, port, other_at, other)
            taken.setdefault(key, []).append((here, port))
    return warnings + _port_name_warnings(spec, at)


def _port_name_warnings(spec: Obj, at: str) -> list[str]:
    warnings = []
    named: dict[str, str] = {}
    for container, where in containers(spec, at):
        for i, port in enumerate(container.get("ports") or []):
            name = port.get("name") or ""
            if name in named:
                first = named[name]
                warnings.append(
                    f"{where}.ports[{i}]: duplicate port name {quote(name)} with {first}, "
                    f"services and probes that select ports by name will use {first}"
                )
            elif name:
                named[name] = f"{where}.ports[{i}]"
    return warnings


def _clash(here: str, port: Obj, other_at: str, other: Obj) -> list[str]:
    ip, other_ip = port.get("hostIP") or "", other.get("hostIP") or ""
    host, other_host = port.get("hostPort") or 0, other.get("hostPort") or 0
    if ip == other_ip and host == other_host:
        return [f"{here}: duplicate port definition with {other_at}"]
    if not host or not other_host:
        return [f"{here}: overlapping port definition with {other_at}"]
    if host == other_host and (not ip) != (not other_ip):
        return [f"{here}: dangerously ambiguous port definition with {other_at}"]
    return []


def _go_port(port: Obj) -> str:
    """Go's ``%+v`` of kube's internal ContainerPort."""
    return (
        f"{{Name:{port.get('name') or ''} HostPort:{port.get('hostPort') or 0} "
        f"ContainerPort:{port.get('containerPort') or 0} Protocol:{port.get('protocol') or ''} "
        f"HostIP:{port.get('hostIP') or ''}}}"
    )


def _affinity_warnings(affinity: Obj, at: str) -> list[str]:
    warnings = []
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if terms is None:
            continue
        required = f"{at}.{kind}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            if (term or {}).get("labelSelector") is None:
                warnings.append(f"{required}[{i}].labelSelector: {NULL_SELECTOR}")
        preferred = f"{at}.{kind}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(
            terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ):
            if ((term or {}).get("podAffinityTerm") or {}).get("labelSelector") is None:
                warnings.append(f"{preferred}[{i}].podAffinityTerm.labelSelector: {NULL_SELECTOR}")
    return warnings


POD_NAME = "the Pod's hostname"
WORKLOAD_NAME = "Pod names and hostnames"
_COMPLETIONS_SOFT_LIMIT = 100_000
_PARALLELISM_SOFT_LIMIT = 10_000


def name_warnings(obj: Obj, used_in: str) -> list[str]:
    """A name that is no DNS label: fine as an object's name, odd in a hostname."""
    problems = is_dns1123_label(obj["metadata"].get("name") or "")
    if not problems:
        return []
    return [
        f"metadata.name: this is used in {used_in}, which can result in surprising "
        f"behavior; a DNS label is recommended: [{' '.join(problems)}]"
    ]


def pod_warnings(pod: Obj, old: Obj | None, gates: GateCheck) -> list[str]:
    """kube's pod strategy: on create only."""
    if old is not None:
        return []
    spec, meta = pod.get("spec") or {}, pod["metadata"]
    return name_warnings(pod, POD_NAME) + spec_and_meta_warnings(spec, meta, "", gates)


def job_spec_warnings(spec: Obj, at: str, gates: GateCheck) -> list[str]:
    """WarningsForJobSpec: an Indexed Job too large to track, then its template."""
    warnings = []
    if spec.get("completionMode") == "Indexed":
        completions, parallelism = spec.get("completions") or 0, spec.get("parallelism") or 0
        if completions > _COMPLETIONS_SOFT_LIMIT and parallelism > _PARALLELISM_SOFT_LIMIT:
            warnings.append(
                f"{at}: In Indexed Jobs with a number of completions higher than 10^5 and a "
                "parallelism higher than 10^4, Kubernetes might not be able to track "
                "completedIndexes when a big number of indexes fail"
            )
    return warnings + template_warnings(spec.get("template"), f"{at}.template", gates)


def generation_changed(new: Obj, old: Obj) -> bool:
    return bool(new["metadata"].get("generation") != old["metadata"].get("generation"))
