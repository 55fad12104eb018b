"""Feature gates: ``--feature-gates=Name=true,...`` with kube v1.36's whole gate table.

The table (featuregates_data.py, generated from kube's Go sources) holds every gate
kube-apiserver v1.36 registers, with its default, stage and lock at emulated version
1.36, so a flag line written for kube-apiserver is accepted or refused here alike.
Parsing follows component-base: the value is a colon-separated multimap (``kube:Name=b``
or plain ``Name=b``, not both), then ``featuregate.Set``: an unknown name is only a
warning, a locked gate set against its lock is an error, setting a GA or deprecated gate
logs kube's warning, ``AllAlpha``/``AllBeta`` fill the unset gates of that stage, and a
gate enabled while one it depends on is off is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from prometheus_client import Gauge

from platform_api.apiserver.featuregates_data import DEPENDENCIES, GATES
from platform_api.apiserver.flagvalues import ConfigError, go_bool
from platform_api.apiserver.metrics import REGISTRY

ALPHA, BETA, GA, DEPRECATED = "ALPHA", "BETA", "", "DEPRECATED"
PRE_ALPHA = "PRE-ALPHA"
EMULATED, MIN_COMPATIBILITY = "1.36", "1.35"

# Served media types, requests and responses (application/cbor, cbor-seq watches).
CBOR_SERVING_AND_STORAGE = "CBORServingAndStorage"
API_RESPONSE_COMPRESSION = "APIResponseCompression"
WATCH_LIST = "WatchList"  # sendInitialEvents on watches (streaming lists)
ALLOW_UNSAFE_MALFORMED_OBJECT_DELETION = "AllowUnsafeMalformedObjectDeletion"
POD_TOPOLOGY_LABELS_ADMISSION = "PodTopologyLabelsAdmission"  # a Binding's labels
CLEARING_NOMINATED_NODE_NAME = "ClearingNominatedNodeNameAfterBinding"
CONSTRAINED_IMPERSONATION = "ConstrainedImpersonation"  # names kube's impersonation filter
ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"


@dataclass(frozen=True)
class Spec:
    default: bool
    stage: str
    locked: bool = False


# featuregate's own two switches, then every gate kube-apiserver v1.36 registers.
KNOWN: Mapping[str, Spec] = MappingProxyType(
    {ALL_ALPHA: Spec(False, ALPHA), ALL_BETA: Spec(False, BETA)}
    | {name: Spec(*values) for name, values in GATES.items()}
)

FEATURE_ENABLED = Gauge(
    "kubernetes_feature_enabled",
    "[BETA] This metric records the data about the stage and enablement of a k8s feature.",
    ["name", "stage"],
    registry=REGISTRY,
)


@dataclass(frozen=True)
class FeatureGates:
    """The gates' values: kube's defaults, then what ``--feature-gates`` set."""

    overrides: Mapping[str, bool] = field(default_factory=dict)
    # Names the flag gave that no gate has (kube warns and ignores them).
    unrecognized: tuple[str, ...] = ()
    # klog lines kube prints for GA/deprecated gates the flag set, in the flag's order.
    warnings: tuple[str, ...] = ()

    def enabled(self, name: str) -> bool:
        if name in self.overrides:
            return self.overrides[name]
        return KNOWN[name].default

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """The flag's value, or a ConfigError with the err text kube-apiserver exits with."""
        pairs = _pairs(_kube_component(text))
        overrides: dict[str, bool] = {}
        unknown: list[str] = []
        problems: list[str] = []
        warnings: list[str] = []
        for name, value in pairs.items():
            spec = KNOWN.get(name)
            if spec is None:
                unknown.append(name)
            elif spec.locked and value != spec.default:
                problems.append(
                    f"cannot set feature gate {name} to {_go(value)}, feature is locked to "
                    f"{_go(spec.default)}"
                )
            elif name in (ALL_ALPHA, ALL_BETA):
                _fill_stage(overrides, pairs, ALPHA if name == ALL_ALPHA else BETA, value)
                overrides[name] = value
            elif spec.stage == PRE_ALPHA:
                problems.append(
                    f"cannot set feature gate {name} to {_go(value)}, feature is PreAlpha at "
                    f"emulated version {EMULATED}, min compatibility version {MIN_COMPATIBILITY}"
                )
            else:
                overrides[name] = value
                warnings.extend(_set_warning(name, spec.stage, value))
        if not problems:
            problems = _dependency_problems(overrides)
        if problems:
            raise ConfigError(_aggregate(problems))
        return cls(MappingProxyType(overrides), tuple(unknown), tuple(warnings))

    def record_metrics(self) -> None:
        """``kubernetes_feature_enabled`` for every gate, as kube's AddMetrics at start."""
        for name, spec in KNOWN.items():
            if spec.stage != PRE_ALPHA:
                FEATURE_ENABLED.labels(name=name, stage=spec.stage).set(
                    1 if self.enabled(name) else 0
                )


def _kube_component(text: str) -> str:
    """The gates of the ``kube`` component from the colon-separated multimap value."""
    by_component: dict[str, list[str]] = {}
    for pair in text.split(","):
        if not pair:
            continue
        component, sep, gate = pair.partition(":")
        if not sep:
            component, gate = "", component
        by_component.setdefault(component.strip(), []).append(gate.strip())
    if "" in by_component and "kube" in by_component:
        raise ConfigError(
            "set kube feature gates with default empty prefix or kube: prefix consistently, "
            "do not mix use"
        )
    for component in by_component:
        if component not in ("", "kube"):
            raise ConfigError(f"component not registered: {component}")
    return ",".join(by_component.get("", []) + by_component.get("kube", []))


def _pairs(text: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise ConfigError(f"missing bool value for {name}")
        value = raw.strip()
        parsed = go_bool(value)
        if parsed is None:
            raise ConfigError(
                f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": '
                "invalid syntax"
            )
        out[name] = parsed
    return out


def _fill_stage(
    overrides: dict[str, bool], given: Mapping[str, bool], stage: str, on: bool
) -> None:
    # featuregate's setUnsetAlphaGates/BetaGates: only the gates the flag left unset.
    for name, spec in KNOWN.items():
        if spec.stage == stage and name not in (ALL_ALPHA, ALL_BETA) and name not in given:
            overrides.setdefault(name, on)


def _set_warning(name: str, stage: str, value: bool) -> Iterable[str]:
    kind = {DEPRECATED: "deprecated", GA: "GA"}.get(stage)
    if kind is None:
        return ()
    return (
        f'"Warning: setting {kind} feature gate. It will be removed in a future release." '
        f'featureGate="{name}" value={_go(value)}',
    )


def _dependency_problems(overrides: Mapping[str, bool]) -> list[str]:
    def on(name: str) -> bool:
        return overrides.get(name, KNOWN[name].default)

    problems = []
    for name, needs in sorted(DEPENDENCIES.items()):
        off = [dep for dep in needs if not on(dep)]
        if on(name) and off:
            problems.append(
                f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]"
            )
    return problems


def _aggregate(problems: list[str]) -> str:
    # utilerrors.Aggregate: one message alone, several in brackets.
    return problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"


def _go(value: bool) -> str:
    return "true" if value else "false"
