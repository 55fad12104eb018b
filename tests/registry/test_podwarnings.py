"""kube's pod and pod-template warnings: each text as kube-apiserver v1.36 sent it for
the same object (its ``kubernetes.io`` keys written ``platform.io``), in its order."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.endpoints.responses import sent_warnings
from platform_api.registry.gateddrops import kube_defaults
from platform_api.registry.podwarnings import (
    job_spec_warnings,
    name_warnings,
    pod_warnings,
    template_warnings,
)

T = "spec.template.spec"
NULL = "a null labelSelector results in matching no pod"


def warned(spec: dict[str, Any], meta: dict[str, Any] | None = None) -> list[str]:
    template = {"metadata": meta or {}, "spec": spec}
    return template_warnings(template, "spec.template", kube_defaults)


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "i", **fields}


def test_deprecated_node_labels_and_null_selectors() -> None:
    spec = {
        "nodeSelector": {"beta.platform.io/os": "linux", "ok": "x"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "failure-domain.beta.platform.io/zone"}]}
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"preference": {"matchExpressions": [{"key": "a", "values": ["bad!"]}]}}
                ],
            },
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]},
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"podAffinityTerm": {}}]
            },
        },
        "topologySpreadConstraints": [{"topologyKey": "failure-domain.beta.platform.io/region"}],
    }
    affinity = f"{T}.affinity"
    assert warned(spec) == [
        f'{T}.nodeSelector[beta.platform.io/os]: deprecated since v1.14; use "platform.io/os" '
        "instead",
        f"{affinity}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.platform.io/zone is "
        'deprecated since v1.17; use "topology.platform.io/zone" instead',
        f"{affinity}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference."
        "matchExpressions[0].values[0]: bad! is invalid, a valid label must be an empty string "
        "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        f"{T}.topologySpreadConstraints[0].topologyKey: failure-domain.beta.platform.io/region "
        'is deprecated since v1.17; use "topology.platform.io/region" instead',
        f"{T}.topologySpreadConstraints[0].labelSelector: {NULL}",
        f"{affinity}.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
        f"labelSelector: {NULL}",
        f"{affinity}.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
        f"podAffinityTerm.labelSelector: {NULL}",
    ]


def test_volumes_and_overlapping_paths() -> None:
    items = [{"key": "a", "path": "p"}, {"key": "b", "path": "p/q"}, {"key": "c", "path": "p/"}]
    token = {"serviceAccountToken": {"path": "t"}}
    claim = {"spec": {"resources": {"requests": {"storage": "1500m"}}}}
    spec = {
        "volumes": [
            {"name": "cm", "configMap": {"name": "x", "items": items}},
            {"name": "pr", "projected": {"sources": [token, {}, {"secret": {"name": "s"}}]}},
            {"name": "eph", "ephemeral": {"volumeClaimTemplate": claim}},
            {"name": "old", "gitRepo": {"repository": "r"}, "storageos": {}},
        ]
    }
    assert warned(spec) == [
        f"{T}.volumes[2].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: "
        'fractional byte value "1500m" is invalid, must be an integer',
        f"{T}.volumes[3].gitRepo: deprecated in v1.11, and disabled by default in v1.33+",
        f"{T}.volumes[3].storageOS: deprecated in v1.22, non-functional in v1.25+",
        'volume "cm" (ConfigMap "x"): overlapping paths: "p/q" with "p"',
        'volume "cm" (ConfigMap "x"): overlapping paths: "p" with "p"',
        'volume "cm" (ConfigMap "x"): overlapping paths: "p" with "p/q"',
        'volume "pr" (Projected) has no sources provided',
    ]


def test_containers_env_resources_and_annotations() -> None:
    env = [
        {"name": "A", "value": "1"},
        {"name": "A", "value": "$(A)x"},  # builds on the first: fine
        {"name": "A", "value": "2"},
        {"name": "B", "value": "1"},
        {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]
    resources = {"limits": {"memory": "1500m"}, "requests": {"ephemeral-storage": "2500m"}}
    spec = {"containers": [container(env=env, resources=resources)], "overhead": {"memory": "1"}}
    meta = {
        "annotations": {
            "seccomp.security.alpha.platform.io/pod": "runtime/default",
            "container.apparmor.security.beta.platform.io/c": "runtime/default",
            "scheduler.alpha.platform.io/critical-pod": "",
        }
    }
    at = "spec.template.metadata.annotations"
    assert warned(spec, meta) == [
        f"{at}[scheduler.alpha.platform.io/critical-pod]: non-functional in v1.16+; use the "
        '"priorityClassName" field instead',
        f"{at}[seccomp.security.alpha.platform.io/pod]: non-functional in v1.27+; use the "
        '"seccompProfile" field instead',
        f"{at}[container.apparmor.security.beta.platform.io/c]: deprecated since v1.30; use the "
        '"appArmorProfile" field instead',
        f'{T}.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, '
        "must be an integer",
        f"{T}.containers[0].resources.requests[ephemeral-storage]: fractional byte value "
        '"2500m" is invalid, must be an integer',
        f'{T}.containers[0].env[2]: hides previous definition of "A", which may be dropped when '
        "using apply",
        f'{T}.containers[0].env[4]: hides previous definition of "B", which may be dropped when '
        "using apply",
    ]


def test_ports_grace_and_addresses() -> None:
    init = {"name": "init", "image": "i", "ports": [{"containerPort": 80, "name": "http"}]}
    tcp = {"protocol": "TCP"}
    ports = [
        {"containerPort": 80, "name": "http", **tcp},
        {"containerPort": 81, "hostPort": 81, **tcp},
        {"containerPort": 81, "hostPort": 81, "hostIP": "1.2.3.4", **tcp},
        {"containerPort": 82, "hostIP": "1.2.3.4", **tcp},
        {"containerPort": 81, **tcp},
    ]
    init["ports"][0].update(tcp)
    spec = {
        "initContainers": [init],
        "containers": [container(ports=ports)],
        "terminationGracePeriodSeconds": -3,
        "dnsConfig": {"nameservers": ["2001:db8:0:0:0:0:0:1"]},
        "hostAliases": [{"ip": "2001:DB8::1"}, {"ip": "2001:DB8::1"}],
    }
    c = f"{T}.containers[0].ports"
    assert warned(spec) == [
        f'{T}.hostAliases[1].ip: duplicate ip "2001:DB8::1"',
        f"{c}[0]: duplicate port definition with {T}.initContainers[0].ports[0]",
        f"{c}[2]: dangerously ambiguous port definition with {c}[1]",
        f"{c}[3]: hostIP set without hostPort: "
        "{Name: HostPort:0 ContainerPort:82 Protocol:TCP HostIP:1.2.3.4}",
        f"{c}[4]: overlapping port definition with {c}[1]",
        f"{c}[4]: overlapping port definition with {c}[2]",
        f'{c}[0]: duplicate port name "http" with {T}.initContainers[0].ports[0], services and '
        f"probes that select ports by name will use {T}.initContainers[0].ports[0]",
        f"{T}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will "
        "be treated as 1",
        f'{T}.dnsConfig.nameservers[0]: IPv6 address "2001:db8:0:0:0:0:0:1" should be in RFC '
        '5952 canonical format ("2001:db8::1")',
        f'{T}.hostAliases[0].ip: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical '
        'format ("2001:db8::1")',
        f'{T}.hostAliases[1].ip: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical '
        'format ("2001:db8::1")',
    ]


def test_a_pod_is_warned_of_on_create_only_and_of_a_name_that_is_no_label() -> None:
    pod = {"metadata": {"name": "a.b"}, "spec": {"nodeSelector": {"beta.platform.io/os": "x"}}}
    assert pod_warnings(pod, None, kube_defaults) == [
        "metadata.name: this is used in the Pod's hostname, which can result in surprising "
        "behavior; a DNS label is recommended: [must not contain dots]",
        'spec.nodeSelector[beta.platform.io/os]: deprecated since v1.14; use "platform.io/os" '
        "instead",
    ]
    assert pod_warnings(pod, pod, kube_defaults) == []
    assert name_warnings({"metadata": {"name": "ok"}}, "x") == []


@pytest.mark.parametrize(("completions", "warns"), [(100_001, True), (100_000, False)])
def test_indexed_jobs_too_large_to_track(completions: int, warns: bool) -> None:
    spec = {"completionMode": "Indexed", "completions": completions, "parallelism": 10_001}
    expected = [
        "spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism "
        "higher than 10^4, Kubernetes might not be able to track completedIndexes when a big "
        "number of indexes fail"
    ]
    assert job_spec_warnings(spec, "spec", kube_defaults) == (expected if warns else [])


def test_kubes_recorder_cuts_warnings_past_4096_characters() -> None:
    short = [f"w{i}" for i in range(3)]
    assert sent_warnings(["", *short]) == short
    long = ["x" * 1000] * 4 + ["y" * 300, "z" * 300]
    cut = sent_warnings(long)
    # the fifth passes 4096: everything so far is sent again cut to 256 characters
    assert cut == ["x" * 256] * 4 + ["y" * 256, "z" * 256]
    many = [str(i) * 300 for i in range(1, 10)] * 3
    sent = sent_warnings(many)
    assert all(len(text) == 256 for text in sent)
    assert sum(map(len, sent)) == 4096  # none added once the cut ones reach the total


def test_a_warning_with_a_control_character_is_not_sent() -> None:
    """kube's NewWarningHeader refuses control characters (C0, DEL, C1): the recorder
    drops such a warning (a webhook's "two\\nlines"), the others still go out."""
    texts = ["careful", "two\nlines", "tab\there", "del\x7f", "c1\x85", "ünïcode ok"]
    assert sent_warnings(texts) == ["careful", "ünïcode ok"]
