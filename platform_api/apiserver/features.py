"""Feature gates: ``--feature-gates=Name=true,...`` with kube v1.36's stages and defaults.

The table holds the gates this server consults; each keeps kube's default, stage and
lock.  Parsing follows component-base's ``featuregate.Set``: comma-separated
``Name=bool`` pairs, a locked gate set against its lock is an error, and an unknown
name is only a warning (kube logs ``unrecognized feature gate`` and goes on).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from platform_api.apiserver.flagvalues import ConfigError, go_bool

ALPHA, BETA, GA, DEPRECATED = "ALPHA", "BETA", "", "DEPRECATED"

# Served media types, requests and responses (application/cbor, cbor-seq watches).
CBOR_SERVING_AND_STORAGE = "CBORServingAndStorage"
API_RESPONSE_COMPRESSION = "APIResponseCompression"


@dataclass(frozen=True)
class Spec:
    default: bool
    stage: str
    locked: bool = False


# kube-apiserver v1.36's values (k8s.io/apiserver/pkg/features, pkg/features).
KNOWN: Mapping[str, Spec] = MappingProxyType(
    {
        API_RESPONSE_COMPRESSION: Spec(True, BETA),
        "AllowUnsafeMalformedObjectDeletion": Spec(False, ALPHA),
        "AuthorizeNodeWithSelectors": Spec(True, GA, locked=True),
        "AuthorizeWithSelectors": Spec(True, GA, locked=True),
        CBOR_SERVING_AND_STORAGE: Spec(False, ALPHA),
        "DeclarativeValidation": Spec(True, GA, locked=True),
        "DeclarativeValidationTakeover": Spec(False, DEPRECATED),
        "ListFromCacheSnapshot": Spec(True, BETA),
        "StructuredAuthenticationConfiguration": Spec(True, GA, locked=True),
        "WatchList": Spec(True, BETA),
    }
)


@dataclass(frozen=True)
class FeatureGates:
    """The gates' values: kube's defaults, then what ``--feature-gates`` set."""

    overrides: Mapping[str, bool] = field(default_factory=dict)
    # Names the flag gave that no gate has (kube warns and ignores them).
    unrecognized: tuple[str, ...] = ()

    def enabled(self, name: str) -> bool:
        if name in self.overrides:
            return self.overrides[name]
        return KNOWN[name].default

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """The flag's value, or a ConfigError worded as pflag and featuregate word it."""
        try:
            pairs = _pairs(text)
        except ValueError as e:
            raise _flag_error(text, str(e)) from None
        overrides: dict[str, bool] = {}
        unknown: list[str] = []
        problems: list[str] = []
        for name, value in pairs.items():
            spec = KNOWN.get(name)
            if spec is None:
                unknown.append(name)
            elif spec.locked and value != spec.default:
                problems.append(
                    f"cannot set feature gate {name} to {_go(value)}, feature is locked to "
                    f"{_go(spec.default)}"
                )
            else:
                overrides[name] = value
        if problems:
            # utilerrors.Aggregate: one message alone, several in brackets.
            message = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
            raise _flag_error(text, message)
        return cls(MappingProxyType(overrides), tuple(unknown))


def _pairs(text: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"missing bool value for {name}")
        value = raw.strip()
        parsed = go_bool(value)
        if parsed is None:
            raise ValueError(
                f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": '
                "invalid syntax"
            )
        out[name] = parsed
    return out


def _go(value: bool) -> str:
    return "true" if value else "false"


def _flag_error(text: str, message: str) -> ConfigError:
    return ConfigError(f'invalid argument "{text}" for "--feature-gates" flag: {message}')
