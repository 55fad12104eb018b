"""``--tracing-config-file``: kube's TracingConfiguration, read and validated as
kube-apiserver reads it (apiserver.config.platform.io, v1, v1beta1 or v1alpha1).

Two fields: the OTLP gRPC collector's ``endpoint`` (gRPC's naming: ``host:port``,
``dns://``, ``unix://``; default ``localhost:4317``) and ``samplingRatePerMillion``
(unset or 0: a request is traced only when its caller's trace is sampled).  kube
decodes the file into its type, so a left-out kind or version is taken as the type's
own and an empty file is the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from platform_api import gourl
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.codec.configfile import ConfigKind, DecodeError, ReadError, read_file
from platform_api.validation import field as fe
from platform_api.validation.field import FieldError

GROUP = "apiserver.config.platform.io"
SCHEMA = ConfigKind(
    "TracingConfiguration",
    (f"{GROUP}/v1", f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1"),
    {"": {"apiVersion", "kind", "endpoint", "samplingRatePerMillion"}},
)
DEFAULT_ENDPOINT = "localhost:4317"  # the OTLP gRPC default
MILLION = 1_000_000
SCHEMES = ("dns", "unix", "unix-abstract")
# kube's internal type embeds the versioned one, so Go's decoder names the field twice.
_AT = "TracingConfiguration.samplingRatePerMillion"


@dataclass(frozen=True)
class TracingConfig:
    endpoint: str = DEFAULT_ENDPOINT
    sampling_rate_per_million: int = 0

    @property
    def ratio(self) -> float:
        return self.sampling_rate_per_million / MILLION


def load(path: str) -> TracingConfig:
    """The file's configuration, refused in kube's words when missing, undecodable or
    invalid."""
    try:
        data = read_file(path)
    except ReadError as e:
        raise ConfigError(
            f'failed to read tracing config: unable to read tracing configuration from "{path}": '
            f"{e}"
        ) from None
    try:
        doc = SCHEMA.document(data, empty={}, into=True)
        endpoint = SCHEMA.typed(doc.get("endpoint"), "TracingConfiguration.endpoint", str, None)
        rate = SCHEMA.int32(doc.get("samplingRatePerMillion"), _AT)
    except DecodeError as e:
        raise ConfigError(
            f"failed to read tracing config: unable to decode tracing configuration data: {e}"
        ) from None
    errors = validate(endpoint, rate)
    if errors:
        raise ConfigError(f"failed to validate tracing configuration: {fe.aggregate(errors)}")
    return TracingConfig(endpoint or DEFAULT_ENDPOINT, rate or 0)


def validate(endpoint: str | None, rate: int | None) -> list[FieldError]:
    """kube's ValidateTracingConfiguration."""
    errors = []
    if rate is not None and rate < 0:
        errors.append(fe.invalid("samplingRatePerMillion", rate, "sampling rate must be positive"))
    if rate is not None and rate > MILLION:
        errors.append(
            fe.invalid(
                "samplingRatePerMillion",
                rate,
                "sampling rate per million must be less than or equal to one million",
            )
        )
    if endpoint is not None:
        errors += _endpoint_errors(endpoint)
    return errors


def _endpoint_errors(endpoint: str) -> list[FieldError]:
    if "//" not in endpoint:
        endpoint = "dns://" + endpoint  # as gRPC names a bare host:port
    try:
        url = gourl.parse(endpoint)
    except gourl.URLError as e:
        return [fe.invalid("endpoint", endpoint, str(e))]
    if url.scheme in SCHEMES:
        return []
    return [
        fe.invalid(
            "endpoint",
            endpoint,
            f"unsupported scheme: {url.scheme}.  Options are none, dns, unix, or unix-abstract.  "
            "See https://github.com/grpc/grpc/blob/master/doc/naming.md",
        )
    ]
