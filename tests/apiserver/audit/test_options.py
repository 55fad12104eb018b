"""The ``--audit-*`` flags: defaults, kube's error texts, and the flags reaching twistd."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.audit.options import AuditOptions, from_flags
from platform_api.apiserver.audit.truncate import TruncateConfig
from platform_api.apiserver.config import ConfigError
from platform_api.apiserver.config import from_flags as server_from_flags
from platform_api.apiserver.tap import Options


def parse(**flags: str) -> AuditOptions:
    given = {k.replace("_", "-"): v for k, v in flags.items()}
    return from_flags(given.get)


def test_defaults() -> None:
    opts = parse()
    assert opts == AuditOptions()
    assert opts.webhook_batch.max_batch_size == 400
    assert opts.webhook_batch.max_batch_wait == 30.0
    assert opts.webhook_batch.buffer_size == 10000
    assert opts.webhook_batch.initial_backoff == 10.0
    assert (opts.webhook_batch.throttle_qps, opts.webhook_batch.throttle_burst) == (10.0, 15)


def test_log_defaults_are_kube_136s(tmp_path: Path) -> None:
    opts = parse(audit_log_path=str(tmp_path / "a.log"))
    assert (opts.log_max_size, opts.log_max_age, opts.log_max_backups) == (100, 366, 100)
    assert opts.log_compress is False
    assert opts.log_truncate == TruncateConfig(False, 10 * 1024 * 1024, 100 * 1024)


def test_compress_and_truncate_flags(tmp_path: Path) -> None:
    opts = parse(
        audit_log_path=str(tmp_path / "a.log"),
        audit_log_compress="true",
        audit_log_truncate_enabled="true",
        audit_log_truncate_max_event_size="2048",
        audit_log_truncate_max_batch_size="2048",
        audit_webhook_config_file=_kubeconfig(tmp_path),
        audit_webhook_truncate_enabled="true",
        audit_webhook_truncate_max_batch_size="204800",
    )
    assert opts.log_compress is True
    assert opts.log_truncate == TruncateConfig(True, 2048, 2048)
    assert opts.webhook_truncate == TruncateConfig(True, 204800, 100 * 1024)
    assert opts.webhook_batch.max_batch_bytes == 204800


def test_log_flags(tmp_path: Path) -> None:
    opts = parse(
        audit_log_path=str(tmp_path / "a.log"),
        audit_log_format="legacy",
        audit_log_maxage="7",
        audit_log_maxbackup="3",
        audit_log_maxsize="50",
        audit_log_mode="batch",
    )
    assert (opts.log_format, opts.log_max_age, opts.log_max_backups) == ("legacy", 7, 3)
    assert (opts.log_max_size, opts.log_mode) == (50, "batch")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"audit_log_format": "xml"},
            'invalid audit log format xml, allowed formats are "legacy,json"',
        ),
        (
            {"audit_log_mode": "fast"},
            'invalid audit log mode fast, allowed modes are "batch,blocking,blocking-strict"',
        ),
        ({"audit_log_maxage": "-1"}, "--audit-log-maxage -1 can't be a negative number"),
        ({"audit_log_maxbackup": "-2"}, "--audit-log-maxbackup -2 can't be a negative number"),
        ({"audit_log_maxsize": "-3"}, "--audit-log-maxsize -3 can't be a negative number"),
        (
            {"audit_log_truncate_max_event_size": "0"},
            "invalid audit truncate log max event size 0, must be a positive number",
        ),
        (
            {"audit_log_truncate_max_batch_size": "1000"},
            "invalid audit truncate log max batch size 1000, must be greater than max event "
            "size (102400)",
        ),
        (
            {"audit_log_truncate_enabled": "yes"},
            'invalid argument "yes" for "--audit-log-truncate-enabled" flag: strconv.ParseBool:'
            ' parsing "yes": invalid syntax',
        ),
        (
            {"audit_log_version": "audit.k8s.io/v1beta1"},
            'invalid group version, allowed versions are ["audit.k8s.io/v1"]',
        ),
    ],
)
def test_log_flag_errors(tmp_path: Path, flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(audit_log_path=str(tmp_path / "a.log"), **flags)
    assert str(err.value) == message


def _kubeconfig(tmp_path: Path) -> str:
    path = tmp_path / "sink.kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {server: 'https://127.0.0.1:1/'}\n"
        "contexts:\n- name: s\n  context: {cluster: s, user: ''}\ncurrent-context: s\n"
    )
    return str(path)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"audit_webhook_batch_buffer_size": "0"},
            "invalid audit batch webhook buffer size 0, must be a positive number",
        ),
        (
            {"audit_webhook_batch_max_size": "-1"},
            "invalid audit batch webhook max batch size -1, must be a positive number",
        ),
        (
            {"audit_webhook_batch_throttle_qps": "0"},
            "invalid audit batch webhook throttle QPS 0, must be a positive number",
        ),
        (
            {"audit_webhook_batch_throttle_burst": "0"},
            "invalid audit batch webhook throttle burst 0, must be a positive number",
        ),
        (
            {"audit_webhook_truncate_max_event_size": "-5"},
            "invalid audit truncate webhook max event size -5, must be a positive number",
        ),
        (
            {"audit_webhook_mode": "sometimes"},
            'invalid audit webhook mode sometimes, allowed modes are "batch,blocking,blocking-strict"',
        ),
    ],
)
def test_webhook_flag_errors(tmp_path: Path, flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(audit_webhook_config_file=_kubeconfig(tmp_path), **flags)
    assert str(err.value) == message


def test_webhook_flags(tmp_path: Path) -> None:
    opts = parse(
        audit_webhook_config_file=_kubeconfig(tmp_path),
        audit_webhook_batch_max_wait="1m30s",
        audit_webhook_initial_backoff="500ms",
        audit_webhook_batch_throttle_enable="false",
        audit_webhook_batch_throttle_qps="0",  # not checked when throttling is off
    )
    assert opts.webhook_batch.max_batch_wait == 90.0
    assert opts.webhook_batch.initial_backoff == 0.5
    assert opts.webhook_batch.throttle_enable is False


def test_unreadable_webhook_config_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        parse(audit_webhook_config_file=str(tmp_path / "missing"))
    assert str(err.value).startswith("initializing audit webhook: ")


def test_flags_reach_the_server_config(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n")
    options = Options()
    options.parseOptions(
        [f"--audit-policy-file={policy}", "--audit-log-path=-", "--audit-log-maxbackup=2"]
    )
    assert options.config.audit.policy_file == str(policy)
    assert options.config.audit.log_path == "-"
    assert options.config.audit.log_max_backups == 2
    assert server_from_flags({}).audit == AuditOptions()
