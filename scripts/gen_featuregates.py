"""Write platform_api/apiserver/featuregates_data.py from kube v1.36's Go feature tables.

kube-apiserver registers the gates of several packages on one ``--feature-gates`` flag
(pkg/features, k8s.io/apiserver, apiextensions, client-go, component-base's logs, metrics
and zpages, controller-manager).  Each gate has versioned specs; what the flag sees is the
last spec at or below the emulated version (1.36) whose min-compatibility version 1.35
satisfies, or PRE-ALPHA when none is.  The dependencies map (pkg/features) is kept too:
featuregate refuses a gate enabled while one it depends on is off.

Usage: ``.venv/bin/python scripts/gen_featuregates.py [KUBE_TREE]``.  The OpenShift-only
gates (pkg/features/openshift_features.go) are left out: kube does not have them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

EMULATED = (1, 36)
MIN_COMPAT = (1, 35)
SOURCES = (
    "pkg/features/kube_features.go",
    "staging/src/k8s.io/apiserver/pkg/features/kube_features.go",
    "staging/src/k8s.io/apiextensions-apiserver/pkg/features/kube_features.go",
    "staging/src/k8s.io/client-go/features/known_features.go",
    "staging/src/k8s.io/component-base/logs/api/v1/kube_features.go",
    "staging/src/k8s.io/component-base/metrics/features/kube_features.go",
    "staging/src/k8s.io/component-base/zpages/features/kube_features.go",
    "staging/src/k8s.io/controller-manager/pkg/features/kube_features.go",
)
OUT = Path(__file__).resolve().parent.parent / "platform_api/apiserver/featuregates_data.py"

CONST = re.compile(r"^\s*(\w+)\s+(?:\w+\.)?Feature\s*=\s*\"(\w+)\"", re.M)
KEY = re.compile(r"^\s*([\w.]+)\s*:\s*\{\s*(?://.*)?$")
SPEC = re.compile(r"^\s*\{(.*Version:\s*version\.MustParse.*)\},?\s*(?://.*)?$")
FIELD = re.compile(r"(\w+):\s*([^,}]+)")
DEPS_START = re.compile(r"^var defaultKubernetesFeatureGateDependencies\b")
DEP_LINE = re.compile(r"^\s*([\w.]+)\s*:\s*\{([^}]*)\}")


def _version(text: str) -> tuple[int, int]:
    major, minor = re.findall(r"\d+", text)[:2]
    return int(major), int(minor)


def _spec(line: str) -> dict[str, object]:
    fields = dict(FIELD.findall(line))
    out: dict[str, object] = {
        "version": _version(fields["Version"]),
        "default": fields.get("Default", "false").strip() == "true",
        "stage": fields["PreRelease"].strip().split(".")[-1],
        "locked": fields.get("LockToDefault", "false").strip() == "true",
    }
    if "MinCompatibilityVersion" in fields:
        out["min_compat"] = _version(fields["MinCompatibilityVersion"])
    return out


def _specs(text: str) -> dict[str, list[dict[str, object]]]:
    """Every ``Key: { {Version: ...}, ... }`` block of the file, by the key's identifier."""
    found: dict[str, list[dict[str, object]]] = {}
    key = None
    for line in text.splitlines():
        if key is None:
            m = KEY.match(line)
            if m:
                key = m.group(1).split(".")[-1]
                specs: list[dict[str, object]] = []
            continue
        m = SPEC.match(line)
        if m:
            specs.append(_spec(m.group(1)))
        elif line.strip().startswith("}"):
            if specs:
                found[key] = specs
            key = None
        elif line.strip() and not line.strip().startswith("//"):
            key = None
    return found


_STAGES = {"Alpha": "ALPHA", "Beta": "BETA", "GA": "", "Deprecated": "DEPRECATED"}


def _at_emulated(specs: list[dict[str, object]]) -> tuple[bool, str, bool]:
    """featuregate's featureSpecAtEmulationAndMinCompatVersion for 1.36 / 1.35."""
    for spec in sorted(specs, key=lambda s: s["version"], reverse=True):  # type: ignore[arg-type,return-value]
        if spec["version"] > EMULATED:  # type: ignore[operator]
            continue
        if "min_compat" in spec and spec["min_compat"] > MIN_COMPAT:  # type: ignore[operator]
            continue
        return bool(spec["default"]), _STAGES[str(spec["stage"])], bool(spec["locked"])
    return False, "PRE-ALPHA", False


def _dependencies(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    inside = False
    for line in text.splitlines():
        if DEPS_START.match(line):
            inside = True
            continue
        if inside and line.startswith("}"):
            break
        m = DEP_LINE.match(re.sub(r"//.*", "", line)) if inside else None
        if m:
            deps = [re.findall(r"\w+", d)[-1] for d in m.group(2).split(",") if d.strip()]
            out[m.group(1).split(".")[-1]] = deps
    return out


def generate(tree: Path) -> str:
    texts = [(tree / path).read_text() for path in SOURCES]
    names = {ident: value for text in texts for ident, value in CONST.findall(text)}
    gates: dict[str, tuple[bool, str, bool]] = {}
    for text in texts:
        for ident, specs in _specs(text).items():
            gates[names.get(ident, ident)] = _at_emulated(specs)
    deps = {
        names.get(k, k): [names.get(d, d) for d in v]
        for k, v in _dependencies(texts[0]).items()
        if v
    }
    lines = [
        '"""kube-apiserver v1.36\'s feature gates, as ``--feature-gates`` sees them.',
        "",
        "Generated by scripts/gen_featuregates.py from kube's Go sources; do not edit.",
        "GATES: name -> (default, stage, locked); stage '' is GA.  DEPENDENCIES: a gate ->",
        "the gates it needs enabled.  AllAlpha/AllBeta are featuregate's own, in features.py.",
        '"""',
        "",
        "GATES: dict[str, tuple[bool, str, bool]] = {",
    ]
    for name in sorted(gates):
        default, stage, locked = gates[name]
        lines.append(f'    "{name}": ({default}, "{stage}", {locked}),')
    lines += ["}", "", "DEPENDENCIES: dict[str, tuple[str, ...]] = {"]
    for name in sorted(deps):
        items = ", ".join(f'"{d}"' for d in deps[name])
        line = f'    "{name}": ({items}{"," if len(deps[name]) == 1 else ""}),'
        if len(line) > 100:  # as ruff format writes it
            line = "\n".join(
                [f'    "{name}": (', *(f'        "{d}",' for d in deps[name]), "    ),"]
            )
        lines.append(line)
    lines += ["}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    default_tree = Path.home() / ".cache/platform-reference/k8s"
    OUT.write_text(generate(Path(sys.argv[1]) if len(sys.argv) > 1 else default_tree))
    print(f"wrote {OUT}")
