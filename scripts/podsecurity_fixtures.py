"""PodSecurity against kube's own fixture pods (pod-security-admission/test/testdata):
for every level and policy version v1.0 on, each ``pass`` pod is allowed and each
``fail`` pod refused with its check's reason.  A conformance check, not part of the suite:
the fixtures are kube's, read from a kube source tree (``~/.cache/platform-reference/k8s``,
which ``../shared/tools/reference-apiserver`` fetches).  Run it with
``.venv/bin/python -m pytest scripts/podsecurity_fixtures.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from platform_api.admission.podsecurity.evaluate import evaluate
from platform_api.admission.podsecurity.levels import LevelVersion, parse_version

TESTDATA = (
    Path.home()
    / ".cache/platform-reference/k8s/staging/src/k8s.io/pod-security-admission/test/testdata"
)
# A failing fixture's name starts with its check's id (lower case); kube's fixtures
# expect these texts in the message.
EXPECTED_REASON = {
    "allowprivilegeescalation": "allowPrivilegeEscalation != false",
    "apparmorprofile": "forbidden AppArmor profile",
    "capabilities_baseline": "capabilities",
    "capabilities_restricted": "unrestricted capabilities",
    "hostnamespaces": "host namespaces",
    "hostpathvolumes": "hostPath",
    "hostports": "hostPort",
    "hostprobesandhostlifecycle": "probe or lifecycle host",
    "privileged": "privileged",
    "procmount_restricted": "procMount",
    "procmount": "procMount",
    "restrictedvolumes": "restricted volume types",
    "runasnonroot": "runAsNonRoot != true",
    "runasuser": "runAsUser=0",
    "selinuxoptions": "seLinuxOptions",
    "seccompprofile_baseline": "seccompProfile",
    "seccompprofile_restricted": "seccompProfile",
    "sysctls": "forbidden sysctl",
    "windowshostprocess": "hostProcess",
}
_VOLUME_SOURCES = frozenset(("name",))
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _pod(path: Path) -> dict[str, Any]:
    """The fixture as this server stores it: platform.io annotation keys, and kube's
    defaulting of a volume without a source to emptyDir (the fixtures rely on it)."""
    text = path.read_text().replace("kubernetes.io/", "platform.io/")
    pod: dict[str, Any] = yaml.load(text, Loader=_LOADER)
    for volume in pod["spec"].get("volumes") or ():
        if set(volume) <= _VOLUME_SOURCES:
            volume["emptyDir"] = {}
    return pod


def _fixtures() -> list[Any]:
    if not TESTDATA.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="no kube source tree"))]
    return [
        pytest.param(level, version.name, id=f"{level}-{version.name}")
        for level in ("baseline", "restricted")
        for version in sorted((TESTDATA / level).iterdir())
    ]


def _check_id(name: str) -> str:
    return name.removesuffix(".yaml").rstrip("0123456789")


@pytest.mark.parametrize(("level", "version"), _fixtures())
def test_kube_fixtures(level: str, version: str) -> None:
    parsed, error = parse_version(version)
    assert not error
    lv = LevelVersion(level, parsed)
    folder = TESTDATA / level / version
    for path in sorted((folder / "pass").glob("*.yaml")):
        pod = _pod(path)
        result = evaluate(lv, pod["metadata"], pod["spec"])
        assert result.allowed, (path.name, result.forbidden_detail())
    failing = sorted((folder / "fail").glob("*.yaml"))
    assert failing
    for path in failing:
        pod = _pod(path)
        result = evaluate(lv, pod["metadata"], pod["spec"])
        expected = EXPECTED_REASON[_check_id(path.name)]
        assert not result.allowed, path.name
        assert expected in result.forbidden_detail(), (path.name, result.forbidden_detail())
