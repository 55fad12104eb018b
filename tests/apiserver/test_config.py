"""Flag values to configuration: kube's syntax and refusals."""

from __future__ import annotations

import importlib

import pytest

from platform_api.admission import plugins as admission_plugins
from platform_api.apiserver.config import ConfigError, from_flags, parse_duration, parse_size


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5m", 300), ("90s", 90), ("1m30s", 90), ("500ms", 0.5), ("1h", 3600), ("0", 0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration("x", text) == seconds


@pytest.mark.parametrize("text", ["", "5", "m", "1x", "5m junk"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_duration("x", text)


def test_sizes() -> None:
    assert parse_size("x", "8Gi") == 8 * 2**30 and parse_size("x", "1000") == 1000
    with pytest.raises(ConfigError):
        parse_size("x", "lots")


def test_defaults() -> None:
    cfg = from_flags({})
    assert cfg.secure_port == 6443 and cfg.authorization_modes == ["AlwaysAllow"]
    assert cfg.request_timeout == 60 and cfg.history_window == 300
    assert cfg.anonymous_paths == (
        "/livez",
        "/readyz",
        "/healthz",
    )  # AlwaysAllow keeps only health public
    assert cfg.cert_dir.endswith("platform-data/pki")


def test_anonymous_off_and_deny_mode() -> None:
    assert from_flags({"anonymous-auth": "false"}).anonymous_paths is None
    deny = from_flags({"authorization-mode": "AlwaysDeny"})
    assert deny.anonymous_auth and deny.anonymous_paths is None


@pytest.mark.parametrize(
    "flags",
    [
        {"authorization-mode": "AlwaysAllow,AlwaysAllow"},
        {"authorization-mode": "Webhook"},
        {"service-cluster-ip-range": "not-a-cidr"},
        {"bind-address": "localhost"},
        {"etcd-compaction-interval": "-1s"},
        {"anonymous-auth": "maybe"},
    ],
)
def test_refused(flags: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        from_flags(flags)


def _defaults() -> tuple[str, ...]:
    return tuple(n for n in admission_plugins.available() if admission_plugins.PLUGINS[n][0])


def test_admission_plugins() -> None:
    """Defaults, plus enabled, minus disabled, always in kube's order."""
    assert from_flags({}).admission_plugins == _defaults()
    assert "NodeRestriction" not in _defaults()
    cfg = from_flags({"enable-admission-plugins": "NodeRestriction"})
    order = list(admission_plugins.PLUGINS)
    assert cfg.admission_plugins == tuple(
        sorted((*_defaults(), "NodeRestriction"), key=order.index)
    )
    cfg = from_flags(
        {
            "enable-admission-plugins": "NodeRestriction",
            "disable-admission-plugins": "NamespaceLifecycle,ResourceQuota,"
            "ValidatingAdmissionWebhook",
        }
    )
    gone = ("NamespaceLifecycle", "ResourceQuota", "ValidatingAdmissionWebhook")
    assert cfg.admission_plugins == tuple(
        n for n in sorted((*_defaults(), "NodeRestriction"), key=order.index) if n not in gone
    )


def test_every_kube_plugin_is_known() -> None:
    """kube v1.36's plugins, in its order (``kube-apiserver -h``); the chain parts are
    built by the chain, every other available one by its module."""
    assert list(admission_plugins.PLUGINS)[:3] == [
        "AlwaysAdmit",
        "NamespaceAutoProvision",
        "NamespaceLifecycle",
    ]
    assert list(admission_plugins.PLUGINS)[-2:] == ["ResourceQuota", "AlwaysDeny"]
    assert len(admission_plugins.PLUGINS) == 41
    for name in admission_plugins.available():
        module = admission_plugins.PLUGINS[name][1]
        if name not in admission_plugins.CHAIN_PARTS:
            assert module is not None
            assert callable(importlib.import_module(module).build)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"enable-admission-plugins": "NodeRestriction,Foo"},
            'enable-admission-plugins plugin "Foo" is unknown',
        ),
        (
            {"disable-admission-plugins": "Foo"},
            'disable-admission-plugins plugin "Foo" is unknown',
        ),
        (
            {
                "enable-admission-plugins": "NodeRestriction,NamespaceLifecycle",
                "disable-admission-plugins": "NamespaceLifecycle,NodeRestriction",
            },
            "[NamespaceLifecycle NodeRestriction] in enable-admission-plugins and "
            "disable-admission-plugins overlapped",
        ),
        ({"max-requests-inflight": "-1"}, "--max-requests-inflight can not be negative value"),
        (
            {"max-mutating-requests-inflight": "-3"},
            "--max-mutating-requests-inflight can not be negative value",
        ),
        (
            {"max-requests-inflight": "1__0"},
            'invalid argument "1__0" for "--max-requests-inflight" flag: '
            'strconv.ParseInt: parsing "1__0": invalid syntax',
        ),
        (  # kube-apiserver v1.36's own words for these (checked on the reference build)
            {"service-node-port-range": "abc"},
            'invalid argument "abc" for "--service-node-port-range" flag: '
            'strconv.Atoi: parsing "abc": invalid syntax',
        ),
        (
            {"service-node-port-range": "32000-31000"},
            'invalid argument "32000-31000" for "--service-node-port-range" flag: '
            "end port cannot be less than start port: 32000-31000",
        ),
        (
            {"service-node-port-range": "60000+6000"},
            'invalid argument "60000+6000" for "--service-node-port-range" flag: '
            "the port range cannot be greater than 65535: 60000+6000",
        ),
        (
            {"service-account-max-token-expiration": "59m"},
            "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds",
        ),
        (
            {"service-account-extend-token-expiration": "no"},
            'invalid argument "no" for "--service-account-extend-token-expiration" flag: '
            'strconv.ParseBool: parsing "no": invalid syntax',
        ),
        (
            {"kubernetes-service-node-port": "80"},
            "kubernetes service node port range 30000-32767 doesn't contain 80",
        ),
        (
            {"kubernetes-service-node-port": "-1"},
            "--kubernetes-service-node-port -1 must be between 0 and 65535, inclusive. If 0, "
            "the Kubernetes master service will be of type ClusterIP",
        ),
        (
            {"kubernetes-service-node-port": "70000"},
            "[--kubernetes-service-node-port 70000 must be between 0 and 65535, inclusive. If "
            "0, the Kubernetes master service will be of type ClusterIP, kubernetes service "
            "node port range 30000-32767 doesn't contain 70000]",
        ),
        (
            {"min-request-timeout": "x"},
            'invalid argument "x" for "--min-request-timeout" flag: '
            'strconv.ParseInt: parsing "x": invalid syntax',
        ),
        (
            {"allow-privileged": "maybe"},
            'invalid argument "maybe" for "--allow-privileged" flag: '
            'strconv.ParseBool: parsing "maybe": invalid syntax',
        ),
        ({"tls-min-version": "VersionTLS14"}, 'unknown tls version "VersionTLS14"'),
        (
            {"tls-curve-preferences": "abc"},
            'invalid argument "abc" for "--tls-curve-preferences" flag: strconv.ParseInt: '
            'parsing "abc": invalid syntax',
        ),
        (
            {"tls-curve-preferences": "0"},
            "curve preference 0 is out of range (must be 1-65535)",
        ),
        (
            {"service-account-jwks-uri": "http://baz.com"},
            "service-account-jwks-uri requires https scheme, parsed as: http://baz.com",
        ),
        (
            {"tls-cipher-suites": "TLS_AES_128_GCM_SHA256,TLS_FOO"},
            "Cipher suite TLS_FOO not supported or doesn't exist",
        ),
    ],
)
def test_flags_refused_in_kubes_words(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_flags(flags)
    assert str(caught.value) == message


def test_admission_plugin_not_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin kube has and this server lacks is named as missing, not unknown."""
    monkeypatch.setitem(admission_plugins.PLUGINS, "AlwaysPullImages", (False, None))
    with pytest.raises(ConfigError) as caught:
        from_flags({"enable-admission-plugins": "AlwaysPullImages"})
    assert str(caught.value) == (
        'enable-admission-plugins plugin "AlwaysPullImages" is not available in this server '
        f"(available: {', '.join(admission_plugins.available())})"
    )
    from_flags({"disable-admission-plugins": "AlwaysPullImages"})  # asks for nothing


@pytest.mark.parametrize(
    ("text", "seconds"), [("1h0m0s", 3600.0), ("2s", 2.0), ("0", 0.0), ("-1s", -1.0)]
)
def test_event_ttl_takes_any_duration_as_kube_does(text: str, seconds: float) -> None:
    assert from_flags({}).event_ttl == 3600.0
    assert from_flags({"event-ttl": text}).event_ttl == seconds


def test_a_bad_event_ttl_gets_pflags_words() -> None:
    with pytest.raises(ConfigError) as raised:
        from_flags({"event-ttl": "x"})
    assert (
        str(raised.value)
        == 'invalid argument "x" for "--event-ttl" flag: time: invalid duration "x"'
    )


def test_integer_flags_are_read_as_pflag_reads_them() -> None:
    """strconv.ParseInt(text, 0, 64): base prefixes and Go's underscores; kube checks no
    range of the toleration seconds (the reference took -5)."""
    cfg = from_flags(
        {
            "max-requests-inflight": "0x10",
            "max-mutating-requests-inflight": "1_0",
            "default-not-ready-toleration-seconds": "-5",
        }
    )
    assert (cfg.max_requests_inflight, cfg.max_mutating_requests_inflight) == (16, 10)
    assert cfg.default_not_ready_toleration_seconds == -5


def test_node_port_ranges_and_the_watch_timeout() -> None:
    assert from_flags({}).service_node_port_range == (30000, 32767)
    for text, ports in (("30000-30099", (30000, 30099)), ("31000+99", (31000, 31099))):
        assert from_flags({"service-node-port-range": text}).service_node_port_range == ports
    assert from_flags({"service-node-port-range": " 30500 "}).service_node_port_range == (
        30500,
        30500,
    )
    assert from_flags({}).min_request_timeout == 1800
    assert from_flags({"min-request-timeout": "60"}).min_request_timeout == 60
    assert from_flags({"allow-privileged": "true"}).service_node_port_range == (30000, 32767)
    assert from_flags({}).allow_privileged is True
    assert from_flags({"allow-privileged": "false"}).allow_privileged is False
    assert from_flags({}).kubernetes_service_node_port == 0
    ranged = {"service-node-port-range": "30100-30109", "kubernetes-service-node-port": "30109"}
    assert from_flags(ranged).kubernetes_service_node_port == 30109


def test_curve_preferences_are_gos_ids() -> None:
    assert from_flags({}).tls_curve_preferences == ()
    assert from_flags({"tls-curve-preferences": "29,23,4588"}).tls_curve_preferences == (
        29,
        23,
        4588,
    )


def test_tls_flags_keep_gos_names() -> None:
    cfg = from_flags(
        {
            "tls-min-version": "VersionTLS13",
            "tls-cipher-suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256",
        }
    )
    assert cfg.tls_min_version == "VersionTLS13"
    assert cfg.tls_cipher_suites == (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_AES_128_GCM_SHA256",
    )
    assert (from_flags({}).tls_min_version, from_flags({}).tls_cipher_suites) == ("", ())


def test_without_the_garbage_collector_its_controller_does_not_run() -> None:
    assert "garbage-collector-controller" in from_flags({}).controllers
    cfg = from_flags({"enable-garbage-collector": "false", "controllers": "*,garbagecollector"})
    assert (cfg.enable_garbage_collector, "garbage-collector-controller" in cfg.controllers) == (
        False,
        False,
    )
