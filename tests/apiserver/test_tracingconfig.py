"""--tracing-config-file: kube's decoding and validation, each message as the reference
kube-apiserver v1.36 printed it for the same file (under its group)."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.config import from_flags
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.apiserver.tracingconfig import DEFAULT_ENDPOINT, TracingConfig

V1 = "apiVersion: apiserver.config.platform.io/v1\nkind: TracingConfiguration\n"
READ = "failed to read tracing config: unable to decode tracing configuration data: "
VALIDATE = "failed to validate tracing configuration: "
INT32 = (
    "Go struct field TracingConfiguration.TracingConfiguration.samplingRatePerMillion of type int32"
)


def load(tmp_path: Path, body: str) -> TracingConfig | None:
    path = tmp_path / "tracing.yaml"
    path.write_text(body)
    return from_flags({"tracing-config-file": str(path)}).tracing


def refused(tmp_path: Path, body: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, body)
    return str(caught.value)


@pytest.mark.parametrize(
    ("body", "config"),
    [
        (V1 + 'endpoint: "127.0.0.1:4317"\nsamplingRatePerMillion: 250\n', ("127.0.0.1:4317", 250)),
        (V1, (DEFAULT_ENDPOINT, 0)),
        # kube decodes into its type: what the file leaves out is the type's own.
        ("", (DEFAULT_ENDPOINT, 0)),
        ("kind: TracingConfiguration\n", (DEFAULT_ENDPOINT, 0)),
        ("endpoint: unix:///run/otel.sock\n", ("unix:///run/otel.sock", 0)),
        (
            "apiVersion: apiserver.config.platform.io/v1alpha1\nkind: TracingConfiguration\n"
            "samplingRatePerMillion: 1000000\n",
            (DEFAULT_ENDPOINT, 1_000_000),
        ),
        ("apiVersion: apiserver.config.platform.io/v1beta1\nendpoint: dns:///otel:4317\n", None),
    ],
)
def test_taken(tmp_path: Path, body: str, config: tuple[str, int] | None) -> None:
    got = load(tmp_path, body)
    assert got is not None
    if config is not None:
        assert (got.endpoint, got.sampling_rate_per_million) == config
    assert got.ratio == got.sampling_rate_per_million / 1e6


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            V1 + "samplingRatePerMillion: 2000000\n",
            VALIDATE + "samplingRatePerMillion: Invalid value: 2000000: sampling rate per "
            "million must be less than or equal to one million",
        ),
        (
            V1 + 'endpoint: "http://[::1"\nsamplingRatePerMillion: -1\n',
            VALIDATE + "[samplingRatePerMillion: Invalid value: -1: sampling rate must be "
            'positive, endpoint: Invalid value: "http://[::1": parse "http://[::1": missing '
            "']' in host]",
        ),
        (
            V1 + 'endpoint: "ht tp://x"\n',
            VALIDATE + 'endpoint: Invalid value: "ht tp://x": parse "ht tp://x": first path '
            "segment in URL cannot contain colon",
        ),
        (
            V1 + 'endpoint: "http://collector:4317"\n',
            VALIDATE + 'endpoint: Invalid value: "http://collector:4317": unsupported scheme: '
            "http.  Options are none, dns, unix, or unix-abstract.  See "
            "https://github.com/grpc/grpc/blob/master/doc/naming.md",
        ),
        (V1 + "foo: 1\n", READ + 'strict decoding error: unknown field "foo"'),
        (
            V1 + 'samplingRatePerMillion: "x"\n',
            READ + f"json: cannot unmarshal string into {INT32}",
        ),
        (
            V1 + "samplingRatePerMillion: 1.5\n",
            READ + f"json: cannot unmarshal number 1.5 into {INT32}",
        ),
        (
            V1 + "samplingRatePerMillion: 3000000000\n",
            READ + f"json: cannot unmarshal number 3000000000 into {INT32}",
        ),
        (
            "apiVersion: apiserver.config.platform.io/v2\nkind: TracingConfiguration\n",
            READ + 'no kind "TracingConfiguration" is registered for version '
            '"apiserver.config.platform.io/v2"',
        ),
        (
            "apiVersion: apiserver.config.platform.io/v1\nkind: Foo\n",
            READ + 'no kind "Foo" is registered for version "apiserver.config.platform.io/v1"',
        ),
        (
            "- a\n",
            READ + "couldn't get version/kind; json parse error: json: cannot unmarshal array "
            'into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }',
        ),
    ],
)
def test_refused(tmp_path: Path, body: str, message: str) -> None:
    assert refused(tmp_path, body) == message


def test_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError) as caught:
        from_flags({"tracing-config-file": str(path)})
    assert str(caught.value) == (
        f'failed to read tracing config: unable to read tracing configuration from "{path}": '
        f"open {path}: no such file or directory"
    )


def test_off_by_default() -> None:
    assert from_flags({}).tracing is None
