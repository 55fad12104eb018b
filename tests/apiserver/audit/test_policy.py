"""Audit policy: loading, kube's validation messages, and rule evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.audit.policy import (
    Attributes,
    PolicyError,
    RequestAuditConfig,
    load_bytes,
    load_file,
)
from platform_api.authentication.user import UserInfo

JANE = UserInfo("jane", groups=("dev", "system:authenticated"))
PROXY = UserInfo("system:kube-proxy", groups=("system:authenticated",))
HEAD = "apiVersion: audit.platform.io/v1\nkind: Policy\n"


def policy(body: str):
    return load_bytes((HEAD + body).encode())


def res(verb: str = "get", resource: str = "pods", **kw: str) -> Attributes:
    return Attributes(
        user=kw.pop("user", JANE), verb=verb, is_resource=True, resource=resource, **kw
    )  # type: ignore[arg-type]


def nonres(path: str, verb: str = "get", user: UserInfo = JANE) -> Attributes:
    return Attributes(user=user, verb=verb, path=path)


SAMPLE = policy(
    """
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
  resources: [{group: "", resources: ["endpoints", "services"]}]
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["pods/log"]}]
- level: Request
  resources: [{group: "apps", resources: ["deployments/*"]}]
- level: Request
  resources: [{group: "*", resources: ["*/status"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"], resourceNames: ["controller-leader"]}]
- level: Metadata
  namespaces: [""]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: Request
  userGroups: ["dev"]
  namespaces: ["team-a"]
- level: Metadata
  omitManagedFields: true
"""
)


@pytest.mark.parametrize(
    ("attrs", "level"),
    [
        (res("watch", "endpoints", namespace="x", user=PROXY), "None"),  # type: ignore[arg-type]
        (res("watch", "endpoints", namespace="x"), "Metadata"),  # not the proxy: falls through
        (res("list", "endpoints", namespace="x", user=PROXY), "Metadata"),  # type: ignore[arg-type]
        (res("get", "secrets", namespace="x", name="s"), "Metadata"),
        (res("get", "pods", namespace="x", name="p", subresource="log"), "RequestResponse"),
        (res("get", "pods", namespace="x", name="p"), "Metadata"),
        (res("update", "deployments", api_group="apps", subresource="scale"), "Request"),
        (res("update", "deployments", api_group="apps", namespace="x"), "Request"),  # res/* too
        (res("update", "jobs", api_group="batch", subresource="status"), "Request"),
        (res("get", "configmaps", namespace="x", name="controller-leader"), "RequestResponse"),
        (res("get", "configmaps", namespace="x", name="other"), "Metadata"),
        (res("list", "nodes"), "Metadata"),  # cluster-scoped: namespace ""
        (res("list", "pods", namespace="team-a"), "Request"),
        (nonres("/healthz"), "None"),
        (nonres("/healthz/etcd"), "None"),
        (nonres("/version"), "None"),
        (nonres("/versions"), "Metadata"),
        (nonres("/metrics"), "Metadata"),
    ],
)
def test_first_matching_rule_wins(attrs: Attributes, level: str) -> None:
    assert SAMPLE.evaluate(attrs).level == level


def test_omit_stages_and_managed_fields_are_merged() -> None:
    cluster = SAMPLE.evaluate(res("list", "nodes"))
    assert cluster == RequestAuditConfig(
        "Metadata", frozenset({"RequestReceived", "ResponseStarted"}), False
    )
    assert SAMPLE.evaluate(res("list", "pods", namespace="x")).omit_managed_fields is True
    assert SAMPLE.evaluate(res("get", "secrets", namespace="x")).omit_managed_fields is False


def test_no_match_is_none_with_policy_defaults() -> None:
    only = policy("omitStages: [Panic]\nrules:\n- level: Metadata\n  verbs: [create]\n")
    assert only.evaluate(res("get")) == RequestAuditConfig("None", frozenset({"Panic"}), False)
    assert only.evaluate(res("create")).level == "Metadata"


def test_resource_rules_never_match_non_resource_requests() -> None:
    rules = policy(
        "rules:\n- level: Request\n  resources: [{group: ''}]\n"
        "- level: Metadata\n  nonResourceURLs: ['*']\n"
    )
    assert rules.evaluate(nonres("/api")).level == "Metadata"
    assert rules.evaluate(res("get", "pods")).level == "Request"
    assert rules.evaluate(res("get", "deployments", api_group="apps")).level == "None"


def test_upstream_group_name_accepted() -> None:
    loaded = load_bytes(b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n")
    assert loaded.evaluate(res()).level == "Metadata"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("rules: []\n", "loaded illegal policy with 0 rules"),
        ("rules:\n- verbs: [get]\n", "rules[0].level: Required value"),
        (
            "rules:\n- level: Everything\n",
            'rules[0].level: Unsupported value: "Everything": supported values: "None", '
            '"Metadata", "Request", "RequestResponse"',
        ),
        (
            "omitStages: [Done]\nrules: [{level: None}]\n",
            'omitStages[0]: Invalid value: "Done": allowed stages are '
            "RequestReceived,ResponseStarted,ResponseComplete,Panic",
        ),
        (
            "rules:\n- level: None\n  nonResourceURLs: [healthz]\n",
            'rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules '
            "must begin with a '/' character",
        ),
        (
            "rules:\n- level: None\n  nonResourceURLs: ['/a*/b']\n",
            'rules[0].nonResourceURLs[0]: Invalid value: "/a*/b": non-resource URL '
            "wildcards '*' must be the final character of the rule",
        ),
        (
            "rules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n",
            'rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both '
            "regular resources and non-resource URLs",
        ),
        (
            "rules:\n- level: None\n  resources: [{group: apps, resourceNames: [x]}]\n",
            'rules[0].resources.resourceNames: Invalid value: ["x"]: using resourceNames '
            "requires at least one resource",
        ),
        (
            "rules:\n- level: Foo\n- level: Bar\n",
            '[rules[0].level: Unsupported value: "Foo": supported values: "None", "Metadata", '
            '"Request", "RequestResponse", rules[1].level: Unsupported value: "Bar": supported '
            'values: "None", "Metadata", "Request", "RequestResponse"]',
        ),
    ],
)
def test_invalid_policies(body: str, message: str) -> None:
    with pytest.raises(PolicyError) as err:
        policy(body)
    assert str(err.value) == message


def test_unknown_group_version() -> None:
    with pytest.raises(PolicyError) as err:
        load_bytes(b"apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n")
    assert str(err.value) == (
        "unknown group version field audit.k8s.io/v1beta1, Kind=Policy in policy"
    )


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text(HEAD + "rules: []\n")
    with pytest.raises(PolicyError) as err:
        load_file(str(bad))
    assert str(err.value) == (
        f"loading audit policy file: loaded illegal policy with 0 rules: from file {bad}"
    )
    missing = tmp_path / "none.yaml"
    with pytest.raises(PolicyError) as err:
        load_file(str(missing))
    assert str(err.value) == (
        f'loading audit policy file: failed to read file path "{missing}": '
        f"open {missing}: no such file or directory"
    )


def test_sample_policy_in_etc_loads() -> None:
    sample = load_file(str(Path(__file__).parents[3] / "etc" / "audit-policy.yaml"))
    assert sample.evaluate(res("get", "secrets", namespace="x")).level == "Metadata"
    assert sample.evaluate(res("create", "pods", namespace="x")).level == "Request"
    assert sample.evaluate(res("list", "deployments", api_group="apps")).level == "Metadata"
    assert "RequestReceived" in sample.evaluate(res()).omit_stages
