"""PodSecurity's checks one by one: kube's policy/*_test.go cases and their exact texts."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.admission.podsecurity import checks_baseline as b
from platform_api.admission.podsecurity import checks_restricted as r
from platform_api.admission.podsecurity.checks import CheckFn, unless_user_namespace
from platform_api.admission.podsecurity.evaluate import checks_for, evaluate
from platform_api.admission.podsecurity.levels import LATEST, LevelVersion, Version

Obj = dict[str, Any]


def c(name: str, **sc: Any) -> Obj:
    """A container; keyword arguments are its securityContext (``_x`` keys go outside)."""
    out: Obj = {"name": name, "image": "i"}
    outer = {k[1:]: v for k, v in sc.items() if k.startswith("_")}
    inner = {k: v for k, v in sc.items() if not k.startswith("_")}
    if inner:
        out["securityContext"] = inner
    out.update(outer)
    return out


def spec(*containers: Obj, **fields: Any) -> Obj:
    return {"containers": list(containers), **fields}


def caps(add: list[str] | None = None, drop: list[str] | None = None) -> Obj:
    out: Obj = {}
    if add is not None:
        out["add"] = add
    if drop is not None:
        out["drop"] = drop
    return out


CASES: list[tuple[CheckFn, Obj, Obj, str, str]] = [
    # (check, metadata, spec, reason, detail)
    (
        b.app_armor,
        {},
        spec(
            c("foo", appArmorProfile={"type": "Unconfined"}),
            c("ok", appArmorProfile={"type": "Localhost", "localhostProfile": "x"}),
        ),
        "forbidden AppArmor profile",
        'container "foo" must not set AppArmor profile type to "Unconfined"',
    ),
    (
        b.app_armor,
        {},
        spec(c("a"), securityContext={"appArmorProfile": {"type": "Unconfined"}}),
        "forbidden AppArmor profile",
        'pod must not set AppArmor profile type to "Unconfined"',
    ),
    (
        b.app_armor,
        {
            "annotations": {
                "container.apparmor.security.beta.platform.io/": "bogus",
                "container.apparmor.security.beta.platform.io/e": "unconfined",
                "container.apparmor.security.beta.platform.io/f": "unknown",
                "container.apparmor.security.beta.platform.io/g": "runtime/default",
                "container.apparmor.security.beta.platform.io/h": "localhost/x",
                "container.apparmor.security.beta.platform.io/i": "",
            }
        },
        spec(c("a")),
        "forbidden AppArmor profiles",
        "annotations must not set AppArmor profile type to "
        '"container.apparmor.security.beta.platform.io/="bogus"", '
        '"container.apparmor.security.beta.platform.io/e="unconfined"", '
        '"container.apparmor.security.beta.platform.io/f="unknown""',
    ),
    (
        b.capabilities_baseline,
        {},
        spec(
            c("a", capabilities=caps(add=["FOO", "BAR"])),
            c("b", capabilities=caps(add=["BAZ", "CHOWN"])),
            c("c", capabilities=caps(add=["CHOWN", "KILL"])),
        ),
        "non-default capabilities",
        'containers "a", "b" must not include "BAR", "BAZ", "FOO" in '
        "securityContext.capabilities.add",
    ),
    (
        b.host_namespaces,
        {},
        spec(c("a"), hostNetwork=True, hostPID=True, hostIPC=True),
        "host namespaces",
        "hostNetwork=true, hostPID=true, hostIPC=true",
    ),
    (
        b.host_path_volumes,
        {},
        spec(
            c("x"),
            volumes=[
                {"name": "a", "hostPath": {"path": "/"}},
                {"name": "b", "hostPath": {"path": "/"}},
                {"name": "c", "emptyDir": {}},
            ],
        ),
        "hostPath volumes",
        'volumes "a", "b"',
    ),
    (
        b.host_ports,
        {},
        spec(
            c("a", _ports=[{"containerPort": 1}]),
            c("b", _ports=[{"containerPort": 1, "hostPort": 10}, {"hostPort": 20}]),
            c("c", _ports=[{"containerPort": 1, "hostPort": 30}]),
        ),
        "hostPort",
        'containers "b", "c" use hostPorts 10, 20, 30',
    ),
    (
        b.host_ports,
        {},
        spec(c("b", _ports=[{"containerPort": 2, "hostPort": 20}])),
        "hostPort",
        'container "b" uses hostPort 20',
    ),
    (
        b.host_probes_and_lifecycle,
        {},
        spec(
            c(
                "a",
                _livenessProbe={"httpGet": {"port": 1, "host": "localhost"}},
                _readinessProbe={"tcpSocket": {"port": 1, "host": "127.0.0.1"}},
                _lifecycle={"preStop": {"httpGet": {"port": 1, "host": "::1"}}},
            ),
            c("b", _startupProbe={"httpGet": {"port": 1, "host": ""}}),
        ),
        "probe or lifecycle host",
        'container "a" uses probe or lifecycle hosts "127.0.0.1", "::1", "localhost"',
    ),
    (
        b.host_probes_and_lifecycle,
        {},
        spec(
            c("invalid2", _lifecycle={"postStart": {"tcpSocket": {"port": 1, "host": "b.com"}}}),
            c("invalid1", _livenessProbe={"httpGet": {"port": 1, "host": "a.com"}}),
        ),
        "probe or lifecycle host",
        'containers "invalid1", "invalid2" use probe or lifecycle hosts "a.com", "b.com"',
    ),
    (
        b.privileged,
        {},
        spec(c("a"), c("b", privileged=False), c("d", privileged=True), c("e", privileged=True)),
        "privileged",
        'containers "d", "e" must not set securityContext.privileged=true',
    ),
    (
        b.proc_mount,
        {},
        spec(
            c("a"),
            c("c", procMount="Default"),
            c("d", procMount="Unmasked"),
            c("e", procMount="other"),
        ),
        "procMount",
        'containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"',
    ),
    (
        b.BASELINE_CHECKS[8].versions[1].check,  # seLinuxOptions from v1.31
        {},
        spec(
            c("a", seLinuxOptions={}),
            c("b", seLinuxOptions={"type": "container_engine_t"}),
            c("e", seLinuxOptions={"type": "bar"}),
            c("f", seLinuxOptions={"user": "bar"}),
            c("g", seLinuxOptions={"role": "baz"}),
            securityContext={"seLinuxOptions": {"type": "foo", "user": "u", "role": "r"}},
        ),
        "seLinuxOptions",
        'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: '
        'types "bar", "foo"; user may not be set; role may not be set',
    ),
    (
        b.BASELINE_CHECKS[8].versions[0].check,  # before v1.31, container_engine_t is not allowed
        {},
        spec(c("a", seLinuxOptions={"type": "container_engine_t"})),
        "seLinuxOptions",
        'container "a" set forbidden securityContext.seLinuxOptions: type "container_engine_t"',
    ),
    (
        b.seccomp_annotations,
        {
            "annotations": {
                "seccomp.security.alpha.platform.io/pod": "unconfined",
                "container.seccomp.security.alpha.platform.io/a": "unconfined",
                "container.seccomp.security.alpha.platform.io/b": "unknown",
                "container.seccomp.security.alpha.platform.io/c": "localhost/x",
                "container.seccomp.security.alpha.platform.io/z": "unknown",  # no such container
            }
        },
        spec(c("a"), c("b"), c("c")),
        "seccompProfile",
        "forbidden annotations "
        'container.seccomp.security.alpha.platform.io/a="unconfined", '
        'container.seccomp.security.alpha.platform.io/b="unknown", '
        'seccomp.security.alpha.platform.io/pod="unconfined"',
    ),
    (
        b.seccomp_fields,
        {},
        spec(
            c("a"),
            c("b", seccompProfile={"type": "RuntimeDefault"}),
            c("c", seccompProfile={"type": "Unconfined"}),
            c("d", seccompProfile={"type": "Unconfined"}),
            securityContext={"seccompProfile": {"type": "Unconfined"}},
        ),
        "seccompProfile",
        'pod and containers "c", "d" must not set securityContext.seccompProfile.type to '
        '"Unconfined"',
    ),
    (
        b.windows_host_process,
        {},
        spec(
            c("a"),
            c("e", windowsOptions={"hostProcess": True}),
            c("f", windowsOptions={"hostProcess": True}),
            securityContext={"windowsOptions": {"hostProcess": True}},
        ),
        "hostProcess",
        'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true',
    ),
    (
        r.allow_privilege_escalation,
        {},
        spec(
            c("a"),
            c("b", allowPrivilegeEscalation=True),
            c("c", privileged=True),
            c("d", allowPrivilegeEscalation=False),
        ),
        "allowPrivilegeEscalation != false",
        'containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false',
    ),
    (
        r.capabilities_restricted,
        {},
        spec(
            c("a", capabilities=caps(add=["FOO", "BAR"])),
            c("b", capabilities=caps(add=["BAZ"], drop=["NET_RAW"])),
            c("c", capabilities=caps(add=["CHOWN", "NET_BIND_SERVICE"], drop=["ALL"])),
            c("d", capabilities=caps(add=["NET_BIND_SERVICE"], drop=["ALL"])),
        ),
        "unrestricted capabilities",
        'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
        'containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in '
        "securityContext.capabilities.add",
    ),
    (
        r.capabilities_restricted,
        {},
        spec(c("a")),
        "unrestricted capabilities",
        'container "a" must set securityContext.capabilities.drop=["ALL"]',
    ),
    (
        r.run_as_non_root,
        {},
        spec(
            c("a"),
            c("b", runAsNonRoot=True),
            c("c", runAsNonRoot=False),
            c("d", runAsNonRoot=False),
            securityContext={"runAsNonRoot": False},
        ),
        "runAsNonRoot != true",
        'pod and containers "c", "d" must not set securityContext.runAsNonRoot=false',
    ),
    (
        r.run_as_non_root,
        {},
        spec(c("a"), c("b"), c("c", runAsNonRoot=True)),
        "runAsNonRoot != true",
        'pod or containers "a", "b" must set securityContext.runAsNonRoot=true',
    ),
    (
        r.run_as_user,
        {},
        spec(
            c("a"),
            c("b", runAsUser=1),
            c("c", runAsUser=0),
            c("d", runAsUser=0),
            securityContext={"runAsUser": 0},
        ),
        "runAsUser=0",
        'pod and containers "c", "d" must not set runAsUser=0',
    ),
    (
        r.seccomp_restricted,
        {},
        spec(c("a"), c("b", seccompProfile={"type": "Localhost"})),
        "seccompProfile",
        'pod or container "a" must set securityContext.seccompProfile.type to '
        '"RuntimeDefault" or "Localhost"',
    ),
    (
        r.seccomp_restricted,
        {},
        spec(
            c("a"),
            c("c", seccompProfile={"type": "Unconfined"}),
            c("d", seccompProfile={"type": "Unconfined"}),
            securityContext={"seccompProfile": {"type": "Unconfined"}},
        ),
        "seccompProfile",
        'pod and containers "c", "d" must not set securityContext.seccompProfile.type to '
        '"Unconfined"',
    ),
]


@pytest.mark.parametrize(("check", "meta", "pod_spec", "reason", "detail"), CASES)
def test_check_messages(check: CheckFn, meta: Obj, pod_spec: Obj, reason: str, detail: str) -> None:
    result = check(meta, pod_spec)
    assert (result.allowed, result.reason, result.detail) == (False, reason, detail)


def test_restricted_volumes_names_every_kind() -> None:
    allowed = ["emptyDir", "secret", "persistentVolumeClaim", "downwardAPI", "configMap"]
    allowed += ["projected", "csi", "ephemeral", "image"]
    volumes = [{"name": f"a{i}", kind: {}} for i, kind in enumerate(allowed, 1)]
    volumes += [{"name": f"b{i}", kind: {}} for i, kind in enumerate(r._RESTRICTED_VOLUMES, 1)]
    volumes.append({"name": "c1", "hostPath": None})  # a null source is no source
    result = r.restricted_volumes({}, spec(c("x"), volumes=volumes))
    names = ", ".join(f'"b{i}"' for i in range(1, 22))
    assert result.reason == "restricted volume types"
    assert result.detail == (
        f'volumes {names}, "c1" use restricted volume types '
        '"awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", '
        '"flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", '
        '"iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", '
        '"scaleIO", "storageos", "unknown", "vsphereVolume"'
    )


def test_sysctls_by_version() -> None:
    newer = {
        27: ["net.ipv4.ip_local_reserved_ports"],
        29: ["net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout"],
        32: ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"],
    }
    for since, names in newer.items():
        pod = spec(c("a"), securityContext={"sysctls": [{"name": n, "value": "1"} for n in names]})
        before = evaluate(LevelVersion("baseline", Version(since - 1)), {}, pod)
        assert before.forbidden_detail() == f"forbidden sysctls ({', '.join(names)})"
        assert evaluate(LevelVersion("baseline", Version(since)), {}, pod).allowed
    pod = spec(c("a"), securityContext={"sysctls": [{"name": "a"}, {"name": "b"}]})
    assert b._sysctls(frozenset())({}, pod).detail == "a, b"


def test_versions_choose_revisions_and_overrides() -> None:
    windows = spec(c("a"), os={"name": "windows"})
    # Before v1.25 the Linux-only restricted checks applied to Windows pods too.
    assert evaluate(LevelVersion("restricted", Version(24)), {}, windows).forbidden_reason() == (
        "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
        "seccompProfile"
    )
    assert evaluate(LevelVersion("restricted", LATEST), {}, windows).forbidden_reason() == (
        "runAsNonRoot != true"
    )
    # Before v1.22 restricted keeps the baseline capabilities check; before v1.8 there is
    # no allowPrivilegeEscalation check; before v1.19 seccomp is the baseline annotation one.
    added = spec(c("a", capabilities=caps(add=["NET_ADMIN"])))
    old = evaluate(LevelVersion("restricted", Version(7)), {}, added)
    assert old.forbidden_reason() == "non-default capabilities, runAsNonRoot != true"
    # Versions past the newest revision mean the newest; latest too.
    assert checks_for("restricted", 35) == checks_for("restricted", 35)
    far = evaluate(LevelVersion("restricted", Version(99)), {}, added)
    assert far == evaluate(LevelVersion("restricted", LATEST), {}, added)
    assert evaluate(LevelVersion("privileged", LATEST), {}, spec(c("a", privileged=True))).allowed


def test_user_namespaces_relax_from_v1_35() -> None:
    root = spec(
        c("a", runAsUser=0, procMount="Unmasked", allowPrivilegeEscalation=False),
        hostUsers=False,
        securityContext={"seccompProfile": {"type": "RuntimeDefault"}},
    )
    root["containers"][0]["securityContext"]["capabilities"] = {"drop": ["ALL"]}
    assert evaluate(LevelVersion("baseline", Version(35)), {}, root).allowed
    assert (
        evaluate(LevelVersion("baseline", Version(34)), {}, root).forbidden_reason() == "procMount"
    )
    # restricted keeps procMount strict, even in a user namespace
    latest = evaluate(LevelVersion("restricted", LATEST), {}, root)
    assert latest.forbidden_reason() == "procMount"
    v34 = evaluate(LevelVersion("restricted", Version(34)), {}, root)
    assert v34.forbidden_reason() == "procMount, runAsNonRoot != true, runAsUser=0"
    assert unless_user_namespace(r.run_as_user)({}, root).allowed


def test_host_probes_only_from_v1_34() -> None:
    pod = spec(c("a", _livenessProbe={"httpGet": {"port": 1, "host": "8.8.8.8"}}))
    assert evaluate(LevelVersion("baseline", Version(33)), {}, pod).allowed
    assert evaluate(LevelVersion("baseline", Version(34)), {}, pod).forbidden_detail() == (
        'probe or lifecycle host (container "a" uses probe or lifecycle host "8.8.8.8")'
    )


def test_ephemeral_and_init_containers_are_checked_in_order() -> None:
    pod = spec(
        c("main", privileged=True),
        initContainers=[c("init", privileged=True)],
        ephemeralContainers=[c("debug", privileged=True)],
    )
    assert b.privileged({}, pod).detail == (
        'containers "init", "main", "debug" must not set securityContext.privileged=true'
    )
