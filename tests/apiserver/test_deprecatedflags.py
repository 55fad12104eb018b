"""Deprecated kube-apiserver flags: accepted, warned about with pflag's text."""

from __future__ import annotations

import io

import pytest
from twisted.python import usage

from platform_api.apiserver.config import from_flags
from platform_api.apiserver.deprecatedflags import DEPRECATED, extract
from platform_api.apiserver.inertflags import INERT


def test_warns_and_drops_flags_that_change_nothing() -> None:
    out = io.StringIO()
    args = ["--apiserver-count=3", "--kubelet-port", "10250", "--enable-logs-handler"]
    kept = extract([*args, "--secure-port=0"], out)
    # --apiserver-count is kept, though deprecated: the master-count reconciler reads it
    assert kept == ["--apiserver-count=3", "--secure-port=0"]
    assert out.getvalue() == (
        "Flag --apiserver-count has been deprecated, apiserver-count is deprecated and will "
        "be removed in a future version.\n"
        "Flag --kubelet-port has been deprecated, kubelet-port is deprecated and will be "
        "removed.\n"
        "Flag --enable-logs-handler has been deprecated, Log handler functionality is "
        "deprecated\n"
    )


def test_successor_takes_the_value() -> None:
    out = io.StringIO()
    kept = extract(["--audit-webhook-batch-initial-backoff=5s"], out)
    assert kept == ["--audit-webhook-initial-backoff=5s"]
    assert out.getvalue() == (
        "Flag --audit-webhook-batch-initial-backoff has been deprecated, Deprecated, use "
        "--audit-webhook-initial-backoff instead.\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--kubelet-port=x"],
            'invalid argument "x" for "--kubelet-port" flag: strconv.ParseUint: parsing "x": '
            "invalid syntax",
        ),
        (
            ["--apiserver-count=many"],
            'invalid argument "many" for "--apiserver-count" flag: strconv.ParseInt: parsing '
            '"many": invalid syntax',
        ),
        (
            ["--enable-logs-handler=maybe"],
            'invalid argument "maybe" for "--enable-logs-handler" flag: strconv.ParseBool: '
            'parsing "maybe": invalid syntax',
        ),
        (["--default-watch-cache-size"], "flag needs an argument: --default-watch-cache-size"),
    ],
)
def test_bad_values(args: list[str], message: str) -> None:
    with pytest.raises(usage.UsageError) as caught:
        extract(args, io.StringIO())
    assert str(caught.value) == message


def test_admission_control_becomes_enable_and_disable() -> None:
    out = io.StringIO()
    kept = extract(["--admission-control=NamespaceLifecycle,ServiceAccount"], out)
    assert kept[0] == "--enable-admission-plugins=NamespaceLifecycle,ServiceAccount"
    disabled = kept[1].removeprefix("--disable-admission-plugins=").split(",")
    assert "ResourceQuota" in disabled and "ServiceAccount" not in disabled
    assert out.getvalue() == (
        "Flag --admission-control has been deprecated, Use --enable-admission-plugins or "
        "--disable-admission-plugins instead. Will be removed in a future version.\n"
    )
    flags = dict(arg.removeprefix("--").split("=", 1) for arg in kept)
    assert from_flags(flags).admission_plugins == ("NamespaceLifecycle", "ServiceAccount")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--admission-control=ServiceAccount", "--enable-admission-plugins=PodSecurity"],
            "admission-control and enable-admission-plugins/disable-admission-plugins flags are "
            "mutually exclusive",
        ),
        (["--admission-control=Bogus"], 'admission-control plugin "Bogus" is unknown'),
    ],
)
def test_admission_control_refusals(args: list[str], message: str) -> None:
    with pytest.raises(usage.UsageError) as caught:
        extract(args, io.StringIO())
    assert str(caught.value) == message


def test_flags_that_change_nothing_here_are_taken_with_why() -> None:
    """A kubeadm manifest's flags for parts this server lacks start it, each named."""
    out = io.StringIO()
    args = ["--kubelet-client-certificate=/etc/pki/kc.crt", "--watch-cache", "--v", "2"]
    kept = extract([*args, "--secure-port=0"], out, tables=(DEPRECATED, INERT))
    assert kept == ["--secure-port=0"]
    assert out.getvalue() == (
        "Flag --kubelet-client-certificate changes nothing on this server: it connects to no "
        "kubelet\n"
        "Flag --watch-cache changes nothing on this server: every resource is watched "
        "through a watch cache, with a history per resource sized as kube's\n"
        "Flag --v changes nothing on this server: twistd writes the log (its --logfile)\n"
    )


@pytest.mark.parametrize(
    ("arg", "message"),
    [  # kube-apiserver v1.36's words (checked on the reference build)
        ("--watch-cache=x", 'strconv.ParseBool: parsing "x": invalid syntax'),
        ("--delete-collection-workers=x", 'strconv.ParseInt: parsing "x": invalid syntax'),
        ("--etcd-healthcheck-timeout=x", 'time: invalid duration "x"'),
        ("--v=x", 'strconv.ParseUint: parsing "x": invalid syntax'),
        ("--max-connection-bytes-per-sec=1k", 'strconv.ParseInt: parsing "1k": invalid syntax'),
        ("--coordinated-leadership-retry-period=2", 'time: missing unit in duration "2"'),
    ],
)
def test_a_bad_value_of_an_inert_flag_is_pflags_error(arg: str, message: str) -> None:
    with pytest.raises(usage.UsageError) as caught:
        extract([arg], io.StringIO(), tables=(DEPRECATED, INERT))
    value = arg.partition("=")[2]
    assert (
        str(caught.value)
        == f'invalid argument "{value}" for "{arg.partition("=")[0]}" flag: {message}'
    )


def test_the_inert_table_is_in_name_order() -> None:
    assert list(INERT) == sorted(INERT)
