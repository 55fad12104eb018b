"""kube's named health checks that this server computes itself."""

from __future__ import annotations

from pathlib import Path

from platform_api.apiserver import healthchecks, pki


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
