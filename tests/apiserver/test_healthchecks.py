"""kube's named health checks that this server computes itself."""

from __future__ import annotations

from pathlib import Path

from platform_api.apiserver import healthchecks, pki
from platform_api.apiserver.config import from_flags
from platform_api.apiserver.health import HealthCheck


def test_the_loopback_certificate_check_fails_once_the_certificate_has_expired(
    tmp_path: Path,
) -> None:
    """The loopback client pins the serving certificate: past its notAfter every loopback
    write would fail, so /healthz and /livez say so (kube's loopback-serving-certificate)."""
    paths = pki.ensure_pki(str(tmp_path / "pki"), "127.0.0.1")
    pem = Path(paths.serving_cert).read_bytes()
    now = [0.0]
    check = healthchecks.loopback_certificate(pem, lambda: now[0])
    assert check.name == "loopback-serving-certificate"
    now[0] = 1_000_000_000.0  # 2001: the check looks at expiry only
    assert check.check() is None
    now[0] = 10_000_000_000.0  # the year 2286
    assert check.check() == "the loopback serving certificate has expired"


class _State:
    def __init__(self, *flags: str) -> None:
        args = dict(flag.split("=", 1) for flag in flags)
        self.config = from_flags(args)
        self.started_at, self.bootstrapped, self.rbac_bootstrapped = 0.0, True, True
        self.shutting_down = False
        self.aggregation = None


def _names(state: _State, endpoint: str) -> list[str]:
    check = HealthCheck("etcd", lambda: None)
    loopback = HealthCheck("loopback-serving-certificate", lambda: None)
    found = healthchecks.endpoints(state, check, [], [], loopback)[endpoint]
    return [c.name for c in found.checks]


def test_readyz_has_etcds_readiness_check() -> None:
    """Upstream kube's /readyz lists ``etcd`` and ``etcd-readiness`` (OpenShift's build,
    the reference here, drops both), on LMDB too: probes ask for them by name."""
    state = _State()
    assert _names(state, "readyz")[:5] == [
        "ping",
        "log",
        "etcd",
        "etcd-readiness",
        "informer-sync",
    ]
    assert "etcd-readiness" not in _names(state, "livez")


def test_the_peer_endpoint_reconciler_hook_follows_its_gate() -> None:
    hook = "poststarthook/peer-endpoint-reconciler-controller"
    assert hook in _names(_State(), "healthz")
    gated = _State("feature-gates=UnknownVersionInteroperabilityProxy=false")
    assert hook not in _names(gated, "healthz")
