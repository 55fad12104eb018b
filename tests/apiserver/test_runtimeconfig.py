"""``--runtime-config``: kube's grammar, error texts and the versions each setting serves."""

from __future__ import annotations

from pathlib import Path

import pytest
from twisted.internet.defer import succeed

from platform_api.apiserver import enablement, runtimeconfig
from platform_api.apiserver.config import from_flags
from platform_api.apiserver.features import FeatureGates
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.synchronous import run

ADMISSION = "admissionregistration.platform.io"
COORDINATION = "coordination.platform.io"
RESOURCE = "resource.platform.io"


def served(text: str, gates: dict[str, bool] | None = None) -> set[tuple[str, str, str]]:
    config = runtimeconfig.parse(text) if text else runtimeconfig.DEFAULT
    on = gates or {}
    scheme, _ = enablement.build(config, lambda name: on.get(name, False), None)  # type: ignore[arg-type]
    return {(rt.group, rt.version, rt.plural) for rt in scheme.all()}


def error(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        runtimeconfig.parse(text)
    return str(caught.value)


def test_configuration_map_grammar() -> None:
    assert runtimeconfig.configuration_map(" a/v1 = true ,,b/v1,a/v1=false") == {
        "a/v1": "false",
        "b/v1": "",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "api/all=false",
            "[--runtime-config=api/all=false conflicts with --enable-priority-and-fairness=true, "
            "invalid runtime-config with only api/all=false]",
        ),
        (
            "api/ga=false",
            "--runtime-config=api/ga=false conflicts with --enable-priority-and-fairness=true",
        ),
        (
            "flowcontrol.apiserver.k8s.io/v1=false",
            "--runtime-config=flowcontrol.apiserver.k8s.io/v1=false conflicts with "
            "--enable-priority-and-fairness=true",
        ),
        ("foo", "runtime-config invalid key foo"),
        (
            "api/all=false,b.example/v1",
            "[--runtime-config=api/all=false conflicts with --enable-priority-and-fairness=true, "
            "unknown api groups b.example/v1]",
        ),
        (
            "api/all=true,api/ga=false",
            "--runtime-config=api/ga=false conflicts with --enable-priority-and-fairness=true",
        ),
        ("apps/v1/deployments/x", "runtime-config invalid key apps/v1/deployments/x"),
        ("foo.example.com/v1", "unknown api groups foo.example.com/v1"),
        ("b.example/v1,a.example/v2=false", "unknown api groups a.example/v2,b.example/v1"),
        ("api/all", "invalid value api/all="),
        ("api/alpha=yes", "invalid value api/alpha=yes"),
        ("api/beta=1", "invalid value api/beta=1"),
        ("batch/v2", "group version batch/v2 that has not been registered"),
        ("autoscaling/v2beta2", "group version autoscaling/v2beta2 that has not been registered"),
        (
            "batch/v1=maybe",
            'invalid value of batch/v1: maybe, err: strconv.ParseBool: parsing "maybe": '
            "invalid syntax",
        ),
        (
            "v1=nope",
            'invalid value of /v1: nope, err: strconv.ParseBool: parsing "nope": invalid syntax',
        ),
        (
            "apps/v1/Deployments=false",
            "invalid key apps/v1/Deployments: group/version/resource and resource is always "
            'lowercase plural, not "Deployments"',
        ),
    ],
)
def test_errors_are_kubes(text: str, message: str) -> None:
    assert error(text) == message


def test_error_reaches_the_flag() -> None:
    with pytest.raises(ConfigError, match=r"^unknown api groups nope/v1$"):
        from_flags({"runtime-config": "nope/v1"})
    assert from_flags({"runtime-config": "api/alpha=true"}).runtime_config.version_enabled(
        COORDINATION, "v1alpha2"
    )


def test_defaults_serve_ga_only() -> None:
    default = served("")
    assert (COORDINATION, "v1", "leases") in default
    assert (RESOURCE, "v1", "resourceclaims") in default  # GA in v1.36
    assert not any("alpha" in v or "beta" in v for _, v, _ in default)


def test_api_alpha_enables_alpha_versions_only() -> None:
    got = served("api/alpha=true") - served("")
    assert got == {
        (ADMISSION, "v1alpha1", "mutatingadmissionpolicies"),
        (ADMISSION, "v1alpha1", "mutatingadmissionpolicybindings"),
        (COORDINATION, "v1alpha2", "leasecandidates"),
        (RESOURCE, "v1alpha3", "devicetaintrules"),
        (RESOURCE, "v1alpha3", "resourcepoolstatusrequests"),
        ("internal.apiserver.platform.io", "v1alpha1", "storageversions"),
    }


def test_api_beta_and_gated_resources() -> None:
    beta = served("api/beta=true")
    assert (RESOURCE, "v1beta2", "resourceclaims") in beta
    assert ("storage.platform.io", "v1beta1", "volumeattributesclasses") in beta
    assert ("certificates.platform.io", "v1beta1", "clustertrustbundles") not in beta
    gated = served("api/beta=true", {"ClusterTrustBundle": True})
    assert ("certificates.platform.io", "v1beta1", "clustertrustbundles") in gated
    assert not any("alpha" in v for _, v, _ in beta)


def test_group_version_and_resource_keys() -> None:
    assert ("batch", "v1", "jobs") not in served("batch/v1=false")
    assert ("batch", "v1", "cronjobs") not in served("batch/v1=false")
    only = served("batch/v1=false,batch/v1/jobs=true")
    assert ("batch", "v1", "jobs") in only and ("batch", "v1", "cronjobs") not in only
    assert ("batch", "v1", "jobs") not in served("batch/v1/jobs=0")
    # a specific key wins over api/all, whatever the order
    mixed = served(f"{COORDINATION}/v1beta1=false,api/all=true")
    assert (COORDINATION, "v1alpha2", "leasecandidates") in mixed
    assert (COORDINATION, "v1beta1", "leasecandidates") not in mixed
    # missing value: true; upstream group names stand for the branded groups
    assert (ADMISSION, "v1beta1", "mutatingadmissionpolicies") in served(
        "admissionregistration.k8s.io/v1beta1"
    )


def test_core_spellings_and_ga_matcher() -> None:
    for text in ("v1=false", "api/v1=false", "api/v1/pods=false,api/legacy=true"):
        assert not any(g == "" for g, _, _ in served(text)), text
    # a flowcontrol v1=true key lets api/ga=false pass the priority-and-fairness check
    no_ga = served("api/ga=false,api/beta=true,flowcontrol.apiserver.platform.io/v1=true")
    assert ("apps", "v1", "deployments") not in no_ga
    assert (RESOURCE, "v1beta1", "deviceclasses") in no_ga


def test_removed_versions_are_accepted_but_never_served() -> None:
    got = served("batch/v1beta1=true,extensions/v1beta1,flowcontrol.apiserver.k8s.io/v1beta3")
    assert got == served("")


def test_versions_share_one_storage(tmp_path: Path) -> None:
    storage = LMDBStorage(
        open_environment(str(tmp_path / "db"), 64 * 2**20), lambda w: succeed(w())
    )
    config = runtimeconfig.parse("api/all=true")
    gates = enablement.gate_check(FeatureGates())
    scheme, stores = enablement.build(config, gates, storage)
    assert [
        rt.version
        for rt in scheme.equivalents(ADMISSION, "v1beta1", "mutatingadmissionpolicybindings")
    ] == [
        "v1",
        "v1beta1",
        "v1alpha1",
    ]
    beta = stores[(ADMISSION, "v1beta1", "mutatingadmissionpolicybindings")]
    body = {
        "apiVersion": f"{ADMISSION}/v1beta1",
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "b"},
        "spec": {"policyName": "p"},
    }
    created = run(beta.create("", body)).object
    assert created["apiVersion"] == f"{ADMISSION}/v1beta1"
    raw = storage.get(beta.key("", "b")).object
    assert raw["apiVersion"] == f"{ADMISSION}/v1"
    for version in ("v1", "v1alpha1"):
        got = stores[(ADMISSION, version, "mutatingadmissionpolicybindings")].get("", "b")
        assert got.object["apiVersion"] == f"{ADMISSION}/{version}"
    # disabled built-in versions keep their stores; disabled optional ones have none
    _, stores = enablement.build(runtimeconfig.parse("batch/v1=false"), gates, storage)
    assert ("batch", "v1", "jobs") in stores
    assert (ADMISSION, "v1beta1", "mutatingadmissionpolicies") not in stores
