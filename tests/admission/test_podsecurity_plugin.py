"""PodSecurity as a plugin: namespace labels, pods, workload templates, exemptions and
the configuration, over real stores, with kube's texts (as the reference server gives
them, with platform.io label keys)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred, succeed

from platform_api.admission.interface import Attributes
from platform_api.admission.podsecurity import evaluate as ev
from platform_api.admission.podsecurity.config import Configuration, load
from platform_api.admission.podsecurity.levels import (
    BASELINE,
    LATEST,
    RESTRICTED,
    LevelVersion,
    Policy,
    Version,
    parse_version,
    policy_to_evaluate,
)
from platform_api.admission.podsecurity.plugin import PodSecurity, significant_update
from platform_api.authentication.user import UserInfo
from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment

Obj = dict[str, Any]
SCHEME = builtin_scheme()
ADMIN = UserInfo("admin", groups=("system:masters",))
K = "pod-security.platform.io/"
RESTRICTED_DETAIL = (
    'allowPrivilegeEscalation != false (container "c" must set '
    "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
    '(container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true '
    '(pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile '
    '(pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" '
    'or "Localhost")'
)


def rt(plural: str, group: str = "") -> Any:
    found = SCHEME.lookup(group, "v1", plural)
    assert found is not None
    return found


class Setup:
    def __init__(self, path: str, config: Configuration | None = None) -> None:
        self.storage = LMDBStorage(open_environment(path, 64 * 2**20), lambda w: succeed(w()))
        self.namespaces = Store(rt("namespaces"), self.storage)
        self.pods = Store(rt("pods"), self.storage)
        self.plugin = PodSecurity(
            config or Configuration(), self.storage, self.namespaces, self.pods
        )
        self.warnings: list[str] = []

    def namespace(self, name: str, **labels: str) -> Obj:
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        ns["metadata"]["labels"] = {K + k.replace("_", "-"): v for k, v in labels.items()}
        d = ensureDeferred(self.namespaces.create("", ns))
        return d.result.object  # type: ignore[no-any-return]

    def pod_in(self, ns: str, obj: Obj) -> None:
        d = ensureDeferred(self.pods.create(ns, obj))
        assert d.result.object

    def attrs(
        self,
        op: str,
        plural: str,
        name: str,
        *,
        group: str = "",
        ns: str = "ns",
        sub: str = "",
        user: UserInfo = ADMIN,
    ) -> Attributes:
        return Attributes(op, rt(plural, group), sub, ns, name, user, False, self.warnings.append)

    def check(self, attrs: Attributes, obj: Obj | None, old: Obj | None = None) -> None:
        self.plugin.validate(attrs, obj, old)

    def refused(self, attrs: Attributes, obj: Obj | None, old: Obj | None = None) -> StatusError:
        with pytest.raises(StatusError) as caught:
            self.plugin.validate(attrs, obj, old)
        return caught.value


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path / "db"))


def pod(name: str, *containers: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": list(containers) or [{"name": "c", "image": "i"}], **spec},
    }


def ns_obj(name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


# -- levels and configuration -------------------------------------------------------------


def test_policy_from_labels() -> None:
    default = Policy()
    assert policy_to_evaluate({}, default) == (default, [])
    policy, errs = policy_to_evaluate(
        {K + "enforce": "baseline", K + "enforce-version": "v1.2"}, default
    )
    assert not errs
    # warn follows an explicitly stricter enforce level, with its version
    assert policy.warn == policy.enforce == LevelVersion(BASELINE, Version(2))
    policy, _ = policy_to_evaluate(
        {K + "enforce": "restricted", K + "warn-version": "v1.5"}, default
    )
    assert policy.warn == LevelVersion(RESTRICTED, Version(5))
    policy, errs = policy_to_evaluate(
        {K + "enforce": "bogus", K + "audit": "bogus", K + "warn": "bogus"}, default
    )
    # a bad enforce level fails closed, bad audit and warn levels fail open
    assert (policy.enforce.level, policy.audit.level, policy.warn.level) == (
        RESTRICTED,
        "privileged",
        "privileged",
    )
    assert [str(e) for e in errs] == [
        f'metadata.labels[{K}enforce]: Invalid value: "bogus": must be one of privileged, '
        "baseline, restricted",
        f'metadata.labels[{K}audit]: Invalid value: "bogus": must be one of privileged, '
        "baseline, restricted",
        f'metadata.labels[{K}warn]: Invalid value: "bogus": must be one of privileged, '
        "baseline, restricted",
    ]
    for bad in ("v2.0", "v1.01", "1.2", "v1.2 ", "v1.", "Latest"):
        assert parse_version(bad) == (LATEST, 'must be "latest" or "v1.x"'), bad
    assert parse_version("v1.0") == (Version(0), "")


def test_configuration() -> None:
    assert load(None) == load({}) == Configuration()
    config = load(
        {
            "apiVersion": "pod-security.admission.config.platform.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "baseline", "warn": "restricted", "warn-version": "v1.30"},
            "exemptions": {"usernames": ["u"], "namespaces": ["n"], "runtimeClasses": ["r.x"]},
        }
    )
    assert config.defaults == Policy(
        LevelVersion(BASELINE, LATEST),
        LevelVersion("privileged", LATEST),
        LevelVersion(RESTRICTED, Version(30)),
    )
    assert (config.usernames, config.namespaces, config.runtime_classes) == (
        {"u"},
        {"n"},
        {"r.x"},
    )
    with pytest.raises(ValueError) as caught:
        load(
            {
                "apiVersion": "pod-security.admission.config.platform.io/v1",
                "kind": "PodSecurityConfiguration",
                "defaults": {"enforce": "x", "audit-version": "y"},
                "exemptions": {"namespaces": ["A", "n", "n"], "usernames": [""]},
            }
        )
    assert str(caught.value) == (
        'PodSecurity invalid: [defaults.enforce: Invalid value: "x": must be one of privileged, '
        'baseline, restricted, defaults.audit-version: Invalid value: "y": must be "latest" or '
        '"v1.x", exemptions.namespaces[0]: Invalid value: "A": a lowercase RFC 1123 label must '
        "consist of lower case alphanumeric characters or '-', and must start and end with an "
        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?'), exemptions.namespaces[2]: Duplicate value: \"n\", "
        'exemptions.usernames[0]: Invalid value: "": username must not be empty]'
    )
    with pytest.raises(ValueError, match="expected a PodSecurityConfiguration"):
        load({"apiVersion": "v1", "kind": "PodSecurityConfiguration"})


# -- namespaces ---------------------------------------------------------------------------


def test_namespace_labels_are_validated(setup: Setup) -> None:
    bad = {K + "enforce": "foo", K + "warn-version": "v2.0", K + "audit": "x"}
    error = setup.refused(
        setup.attrs("CREATE", "namespaces", "psa-bad", ns=""), ns_obj("psa-bad", bad)
    )
    assert error.code == 422
    assert error.message == (
        f'Namespace "psa-bad" is invalid: [metadata.labels[{K}enforce]: Invalid value: "foo": '
        f"must be one of privileged, baseline, restricted, metadata.labels[{K}audit]: Invalid "
        f'value: "x": must be one of privileged, baseline, restricted, metadata.labels[{K}'
        'warn-version]: Invalid value: "v2.0": must be "latest" or "v1.x"]'
    )
    assert error.details == {
        "name": "psa-bad",
        "kind": "Namespace",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "foo": must be one of privileged, baseline, restricted',
                "field": f"metadata.labels[{K}enforce]",
            },
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "x": must be one of privileged, baseline, restricted',
                "field": f"metadata.labels[{K}audit]",
            },
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "v2.0": must be "latest" or "v1.x"',
                "field": f"metadata.labels[{K}warn-version]",
            },
        ],
    }
    update = setup.attrs("UPDATE", "namespaces", "psa-bad", ns="psa-bad")
    # unchanged bad labels may stay; new bad labels may not
    setup.check(update, ns_obj("psa-bad", bad), ns_obj("psa-bad", bad))
    worse = {**bad, K + "enforce-version": "bogus"}
    assert setup.refused(update, ns_obj("psa-bad", worse), ns_obj("psa-bad", bad)).code == 422
    # status and finalize updates are not looked at
    setup.check(setup.attrs("UPDATE", "namespaces", "n", sub="status"), ns_obj("n", bad), None)


def test_stricter_enforce_warns_about_existing_pods(setup: Setup) -> None:
    setup.namespace("psa-warn")
    bad = {
        "name": "c",
        "image": "i",
        "ports": [{"containerPort": 80, "hostPort": 80}],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}},
    }
    setup.pod_in("psa-warn", pod("x", bad, hostNetwork=True))
    setup.pod_in("psa-warn", pod("x-hkss9"))
    setup.pod_in("psa-warn", pod("y"))
    old = ns_obj("psa-warn", {})
    update = setup.attrs("UPDATE", "namespaces", "psa-warn", ns="psa-warn")
    setup.check(update, ns_obj("psa-warn", {K + "enforce": "baseline"}), old)
    assert setup.warnings == [
        'existing pods in namespace "psa-warn" violate the new PodSecurity enforce level '
        '"baseline:latest"',
        "x: non-default capabilities, host namespaces, hostPort",
    ]
    setup.warnings.clear()
    labels = {K + "enforce": "restricted", K + "enforce-version": "v1.30"}
    setup.check(update, ns_obj("psa-warn", labels), ns_obj("psa-warn", {K + "enforce": "baseline"}))
    assert setup.warnings == [
        'existing pods in namespace "psa-warn" violate the new PodSecurity enforce level '
        '"restricted:v1.30"',
        "x-hkss9 (and 1 other pod): allowPrivilegeEscalation != false, unrestricted "
        "capabilities, runAsNonRoot != true, seccompProfile",
        "x: host namespaces, hostPort, allowPrivilegeEscalation != false, unrestricted "
        "capabilities, runAsNonRoot != true, seccompProfile",
    ]
    # Relaxing, keeping the same level or going privileged lists nothing.
    setup.warnings.clear()
    restricted = ns_obj("psa-warn", {K + "enforce": "restricted"})
    setup.check(update, ns_obj("psa-warn", {K + "enforce": "baseline"}), restricted)
    setup.check(update, restricted, restricted)
    setup.check(update, ns_obj("psa-warn", {K + "enforce": "privileged"}), restricted)
    assert setup.warnings == []


def test_existing_pods_are_prioritized_and_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    def owned(name: str, uid: str) -> Obj:
        obj = pod(name)
        obj["metadata"]["ownerReferences"] = [{"uid": uid, "controller": True}]
        return obj

    exempt = pod("a-exempt", runtimeClassName="kata")
    pods = [
        exempt,
        owned("b1", "rs"),
        owned("b2", "rs"),
        owned("b3", "rs"),
        pod("c"),
        owned("d", "other"),
    ]
    order = [p["metadata"]["name"] for p in ev.prioritize(pods, frozenset({"kata"}))]
    assert order == ["b1", "c", "d", "b2", "b3"]
    monkeypatch.setattr(ev, "MAX_PODS_TO_CHECK", 2)
    baseline = LevelVersion(BASELINE, LATEST)
    privileged = pod("p", {"name": "c", "image": "i", "securityContext": {"privileged": True}})
    assert ev.existing_pod_warnings(
        "n", baseline, [privileged, pod("q"), pod("r")], frozenset()
    ) == [
        "new PodSecurity enforce level only checked against the first 2 of 3 existing pods",
        'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
        "p: privileged",
    ]
    ticks = iter([0.0, 2.0])
    warnings = ev.existing_pod_warnings(
        "n",
        LevelVersion(RESTRICTED, LATEST),
        [pod("q"), pod("r")],
        frozenset(),
        lambda: next(ticks),
    )
    assert (
        warnings[0]
        == "new PodSecurity enforce level only checked against the first 1 of 2 existing pods"
    )
    assert warnings[2].startswith("q: ")


def test_exempt_namespace_relabelled(tmp_path: Path) -> None:
    setup = Setup(str(tmp_path / "db"), Configuration(namespaces=frozenset({"test"})))
    labels = {
        K + "enforce": "restricted",
        K + "enforce-version": "v1.0",
        K + "audit": "restricted",
        K + "warn": "baseline",
    }
    update = setup.attrs("UPDATE", "namespaces", "test", ns="test")
    setup.check(update, ns_obj("test", labels), ns_obj("test", {}))
    assert setup.warnings == [
        'namespace "test" is exempt from Pod Security, and the policy (enforce=restricted:v1.0, '
        "audit=restricted:latest, warn=baseline:latest) will be ignored"
    ]
    # kube's create requests carry no namespace, so creating one never warns.
    setup.warnings.clear()
    setup.check(setup.attrs("CREATE", "namespaces", "test", ns=""), ns_obj("test", labels))
    assert setup.warnings == []


# -- pods -------------------------------------------------------------------------------


def test_enforce_refuses_and_warn_warns(setup: Setup) -> None:
    setup.namespace("enf", enforce="restricted")
    setup.namespace("warn", warn="restricted")
    privileged = {"name": "c", "image": "i", "securityContext": {"privileged": True}}
    error = setup.refused(setup.attrs("CREATE", "pods", "x", ns="enf"), pod("x", privileged))
    assert (error.code, error.reason) == (403, "Forbidden")
    assert error.message == (
        'pods "x" is forbidden: violates PodSecurity "restricted:latest": privileged '
        '(container "c" must not set securityContext.privileged=true), ' + RESTRICTED_DETAIL
    )
    assert error.details == {"name": "x", "kind": "pods"}
    assert setup.warnings == []
    setup.check(setup.attrs("CREATE", "pods", "x", ns="warn"), pod("x"))
    assert setup.warnings == [f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}']


def test_pods_skipped(tmp_path: Path) -> None:
    config = Configuration(
        usernames=frozenset({"trusted"}),
        namespaces=frozenset({"free"}),
        runtime_classes=frozenset({"kata"}),
    )
    setup = Setup(str(tmp_path / "db"), config)
    setup.namespace("enf", enforce="restricted")
    setup.namespace("free", enforce="restricted")
    setup.namespace("open")
    bad = pod("x")
    setup.check(setup.attrs("CREATE", "pods", "x", ns="free"), bad)
    setup.check(setup.attrs("CREATE", "pods", "x", ns="enf", user=UserInfo("trusted")), bad)
    setup.check(setup.attrs("CREATE", "pods", "x", ns="enf"), pod("x", runtimeClassName="kata"))
    setup.check(setup.attrs("CREATE", "pods", "x", ns="open"), bad)
    setup.check(setup.attrs("UPDATE", "pods", "x", ns="enf", sub="status"), bad, bad)
    setup.check(setup.attrs("DELETE", "pods", "x", ns="enf"), None, bad)
    assert setup.warnings == []
    error = setup.refused(setup.attrs("CREATE", "pods", "x", ns="gone"), bad)
    assert (error.code, error.message) == (
        500,
        'Internal error occurred: failed to lookup namespace "gone"',
    )


def test_pod_updates(setup: Setup) -> None:
    setup.namespace("enf", enforce="baseline")
    old = pod("x", {"name": "c", "image": "i", "securityContext": {"privileged": True}})
    relabelled = {**old, "metadata": {"name": "x", "labels": {"a": "b"}}}
    update = setup.attrs("UPDATE", "pods", "x", ns="enf")
    setup.check(update, relabelled, old)  # nothing the checks see changed
    new_image = pod("x", {"name": "c", "image": "j", "securityContext": {"privileged": True}})
    assert setup.refused(update, new_image, old).code == 403
    debug = {"name": "d", "image": "busybox", "securityContext": {"privileged": True}}
    with_debug = {**old, "spec": {**old["spec"], "ephemeralContainers": [debug]}}
    sub = setup.attrs("UPDATE", "pods", "x", ns="enf", sub="ephemeralcontainers")
    error = setup.refused(sub, with_debug, old)
    assert error.message == (
        'pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged '
        '(containers "c", "d" must not set securityContext.privileged=true)'
    )
    assert not significant_update(with_debug, with_debug)
    assert significant_update(
        pod("x", {"name": "c", "image": "i"}, {"name": "e", "image": "i"}), old
    )


# -- workload templates -------------------------------------------------------------------


def deployment() -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"metadata": {"labels": {"a": "b"}}, "spec": pod("p")["spec"]}},
    }


def test_templates_warn_but_are_not_enforced(setup: Setup) -> None:
    setup.namespace("enf", enforce="restricted")
    setup.check(setup.attrs("CREATE", "deployments", "d", group="apps", ns="enf"), deployment())
    assert setup.warnings == [f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}']
    setup.warnings.clear()
    cronjob = {"spec": {"jobTemplate": {"spec": {"template": deployment()["spec"]["template"]}}}}
    setup.check(setup.attrs("CREATE", "cronjobs", "cj", group="batch", ns="enf"), cronjob)
    template = {"template": deployment()["spec"]["template"]}
    setup.check(setup.attrs("UPDATE", "podtemplates", "t", ns="enf"), template, template)
    assert setup.warnings == [setup.warnings[0]] * 2
    setup.warnings.clear()
    # A ReplicationController without a template, a subresource, a missing namespace:
    # nothing to say.
    setup.check(setup.attrs("CREATE", "replicationcontrollers", "rc", ns="enf"), {"spec": {}})
    scale = setup.attrs("UPDATE", "deployments", "d", group="apps", ns="enf", sub="scale")
    setup.check(scale, deployment(), deployment())
    setup.check(setup.attrs("CREATE", "deployments", "d", group="apps", ns="gone"), deployment())
    assert setup.warnings == []


def test_verdict_audit_annotations() -> None:
    policy = Policy(
        LevelVersion(BASELINE, LATEST),
        LevelVersion(RESTRICTED, Version(30)),
        LevelVersion(RESTRICTED, LATEST),
    )
    verdict = ev.evaluate_pod(policy, "bad labels", {}, pod("p")["spec"], enforce=True)
    assert verdict.denial == ""
    assert verdict.audit == {
        "error": "Failed to parse policy: bad labels",
        "enforce-policy": "baseline:latest",
        "audit-violations": f'would violate PodSecurity "restricted:v1.30": {RESTRICTED_DETAIL}',
    }
    assert verdict.warnings == [
        f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}'
    ]
