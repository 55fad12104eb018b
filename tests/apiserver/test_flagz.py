"""/flagz: each flag's value as pflag prints it, and the page as kube-apiserver v1.36
serves it.  The expected forms are the reference's, started with these values."""

from __future__ import annotations

import io
import random

import orjson
import pytest

from platform_api import errors
from platform_api.apiserver import deprecatedflags, flagz
from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.flagzdata import KUBE_FLAGS
from platform_api.apiserver.inertflags import INERT
from platform_api.apiserver.tap import Options


@pytest.mark.parametrize(
    ("flag", "given", "shown"),
    [
        ("max-requests-inflight", "010", "8"),  # base 0, as pflag's ints
        ("audit-log-maxage", "0x10", "16"),
        ("delete-collection-workers", "+3", "3"),
        ("kubelet-port", "1", "1"),
        ("v", "2", "2"),
        ("event-ttl", "90s", "1m30s"),
        ("request-timeout", "1.5h", "1h30m0s"),
        ("allow-privileged", "1", "true"),
        ("anonymous-auth", "F", "false"),
        ("audit-log-batch-throttle-qps", "1.5", "1.5"),
        ("goaway-chance", "0.001", "0.001"),
        ("api-audiences", "b,a,c", "[b,a,c]"),
        ("tls-curve-preferences", "23,29", "[23,29]"),
        ("etcd-servers", "", "[]"),
        ("allow-metric-labels", "x,y=z", '["x,y=z"]'),  # one "=": one pair, its key "x,y"
        ("allow-metric-labels", "a=1,b=2", "[a=1,b=2]"),
        ("runtime-config", "apps/v1=true,api/all=true", "api/all=true,apps/v1=true"),
        (
            "feature-gates",
            "ComponentFlagz=true,APIServerTracing=true",
            ":ComponentFlagz=true,:APIServerTracing=true",
        ),
        ("feature-gates", "kube:A=true", "kube:A=true"),
        ("bind-address", "127.000.0.1", "127.000.0.1"),  # refused at start; shown as given
        ("advertise-address", "::0001", "::1"),
        ("vmodule", "foo=3", "foo=3"),
        ("service-node-port-range", "30000-30100", "30000-30100"),
    ],
)
def test_a_given_value_is_shown_as_pflag_prints_it(flag: str, given: str, shown: str) -> None:
    assert flagz.pflag_string(KUBE_FLAGS[flag][0], given) == shown


def test_given_values_then_the_servers_defaults_then_kubes() -> None:
    shown = flagz.values({"event-ttl": "2h"}, {"storage-backend": "lmdb", "workers": "1"})
    assert shown["event-ttl"] == "2h0m0s"
    assert (shown["storage-backend"], shown["workers"]) == ("lmdb", "1")
    assert (shown["audit-log-maxage"], shown["help"], shown["version"]) == ("366", "false", "false")
    assert list(shown) == sorted(shown)


def test_watch_cache_sizes_are_completed_with_kubes_own() -> None:
    shown = flagz.values({"watch-cache-sizes": "pods#5,events#3"}, {})
    assert shown["watch-cache-sizes"] == "[events#3,events.events.k8s.io#0,pods#5]"
    assert flagz.values({}, {})["watch-cache-sizes"] == "[events#0,events.events.k8s.io#0]"


def test_the_servers_defaults_name_its_own_files() -> None:
    cfg = ServerConfig(cert_dir="/d/pki")
    cfg.endpoints.advertise_address = "10.1.2.3"
    defaults = flagz.server_defaults(cfg)
    assert defaults["tls-cert-file"] == "/d/pki/apiserver.crt"
    assert defaults["service-account-signing-key-file"] == "/d/pki/sa.key"
    assert (defaults["advertise-address"], defaults["external-hostname"]) == ("10.1.2.3",) * 2
    assert defaults["storage-media-type"] == "application/vnd.platform.protobuf"
    assert "authorization-mode" not in defaults  # --help's "AlwaysAllow" is kube's "[]"
    cfg.tls_cert_file = "/given.crt"
    assert "tls-cert-file" not in flagz.server_defaults(cfg)


def test_the_command_line_reaches_the_page_ignored_flags_too() -> None:
    options = Options()
    options.parseOptions(
        [
            "--event-ttl=90s",
            "--kubelet-timeout",
            "3s",
            "--v=4",
            "--api-audiences=a",
            "--api-audiences=b",
        ]
    )
    given = options.config.flags_given
    assert given == {"event-ttl": "90s", "kubelet-timeout": "3s", "v": "4", "api-audiences": "a,b"}


def test_extract_hands_over_each_taken_flag() -> None:
    taken: dict[str, str] = {}
    args = ["--v=1", "--watch-cache", "--vmodule", "x=2", "--v=3", "--secure-port=1"]
    kept = deprecatedflags.extract(args, io.StringIO(), tables=(INERT,), taken=taken)
    assert kept == ["--secure-port=1"]
    assert taken == {"v": "1,3", "watch-cache": "true", "vmodule": "x=2"}


def test_the_text_page_keeps_its_first_delimiter(monkeypatch: pytest.MonkeyPatch) -> None:
    page = flagz.FlagzPage(lambda: {"a-flag": "[]", "b": "1m0s"})
    monkeypatch.setattr(random, "choice", lambda choices: choices[1])
    body, content_type, warning = page.render("")
    assert (content_type, warning) == (b"text/plain; charset=utf-8", None)
    assert body.decode() == (
        "\napiserver flagz\nWarning: This endpoint is not meant to be machine parseable, has "
        "no formatting compatibility guarantees and is for debugging purposes only.\n"
        "a-flag: []\nb: 1m0s\n"
    )
    monkeypatch.setattr(random, "choice", lambda choices: choices[2])
    assert page.render("text/plain")[0] == body


def test_the_structured_page() -> None:
    page = flagz.FlagzPage(lambda: {"b": "x"})
    accept = "application/yaml;g=config.platform.io;v=v1beta1;as=Flagz"
    body, content_type, warning = page.render(accept)
    assert (content_type, warning) == (accept.encode(), None)
    assert body == (
        b"apiVersion: config.platform.io/v1beta1\nflags:\n  b: x\nkind: Flagz\n"
        b"metadata:\n  name: apiserver\n"
    )
    body, _, warning = page.render("application/json;g=config.platform.io;v=v1alpha1;as=Flagz")
    assert orjson.loads(body)["apiVersion"] == "config.platform.io/v1alpha1"
    assert warning == (
        b'299 - "This version of the flagz endpoint is deprecated. Please use a newer version."'
    )


@pytest.mark.parametrize(
    "accept",
    [
        "application/json",
        "application/json;g=config.platform.io;v=v1beta1;as=Statusz",
        "application/cbor;g=config.platform.io;v=v1beta1;as=Flagz",
        "application/vnd.platform.protobuf;g=config.platform.io;v=v1beta1;as=Flagz",
    ],
)
def test_other_media_types_are_refused_as_kube_refuses_them(accept: str) -> None:
    with pytest.raises(errors.StatusError) as refused:
        flagz.FlagzPage(dict).render(accept)
    assert (refused.value.code, refused.value.reason) == (406, "NotAcceptable")
    assert refused.value.message == (
        "only the following media types are accepted: application/json, application/yaml, "
        "text/plain"
    )


def test_the_flags_are_worked_out_on_the_first_request_only() -> None:
    calls: list[int] = []
    page = flagz.FlagzPage(lambda: calls.append(1) or {"b": "x"})  # type: ignore[func-returns-value]
    assert calls == []
    page.render("")
    page.render("application/json;g=config.platform.io;v=v1beta1;as=Flagz")
    assert calls == [1]


def test_shown_flags_of_a_configuration() -> None:
    cfg = ServerConfig(cert_dir="/d/pki", flags_given={"event-ttl": "90s"})
    shown = flagz.shown_flags(cfg)
    assert (shown["event-ttl"], shown["cert-dir"]) == ("1m30s", "/d/pki")
