"""kube-apiserver flags kube marks deprecated: accepted, warned about as pflag does.

Command lines written for kube-apiserver still carry these flags; kube parses them,
prints ``Flag --X has been deprecated, <message>`` on stderr and goes on, so this server
does too.  They are taken off the command line before twistd parses it (pflag hides them
from ``--help`` as well).  A flag whose value another flag now carries is rewritten to
it; ``--apiserver-count``, which the deprecated master-count reconciler still reads, is
kept as it is; the others change nothing here, as they change next to nothing in kube
v1.36.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from twisted.python import usage

from platform_api.admission.plugins import PLUGINS
from platform_api.apiserver.flagvalues import go_bool


def _uint(text: str) -> str | None:
    return None if text.isdigit() else f'strconv.ParseUint: parsing "{text}": invalid syntax'


def _int(text: str) -> str | None:
    body = text[1:] if text[:1] in "+-" else text
    return None if body.isdigit() else f'strconv.ParseInt: parsing "{text}": invalid syntax'


def _bool(text: str) -> str | None:
    return (
        None
        if go_bool(text) is not None
        else f'strconv.ParseBool: parsing "{text}": invalid syntax'
    )


def _any(text: str) -> str | None:
    return None


@dataclass(frozen=True)
class Deprecated:
    message: str  # kube's MarkDeprecated text
    check: Callable[[str], str | None] = _any  # pflag's parse error for a bad value
    now: str = ""  # the flag that carries the value now, if any
    boolean: bool = False  # may be given bare
    # The flags that carry the value now, given the value and the whole command line.
    rewrite: Callable[[str, list[str]], list[str]] | None = None


def _admission_control(value: str, args: list[str]) -> list[str]:
    """kube's computePluginNames: the named plugins on, every other plugin off."""
    for arg in args:
        if arg.split("=", 1)[0] in ("--enable-admission-plugins", "--disable-admission-plugins"):
            raise usage.UsageError(
                "admission-control and enable-admission-plugins/disable-admission-plugins "
                "flags are mutually exclusive"
            )
    names = [name.strip() for name in value.split(",") if name.strip()]
    for name in names:
        if name not in PLUGINS:
            raise usage.UsageError(f'admission-control plugin "{name}" is unknown')
    others = sorted(set(PLUGINS) - set(names))
    return [f"--enable-admission-plugins={','.join(names)}"] * bool(names) + [
        f"--disable-admission-plugins={','.join(others)}"
    ]


# kube-apiserver v1.36's MarkDeprecated flags (cmd/kube-apiserver, pkg/controlplane,
# pkg/kubeapiserver and k8s.io/apiserver options) this server accepts.
DEPRECATED: dict[str, Deprecated] = {
    "admission-control": Deprecated(
        "Use --enable-admission-plugins or --disable-admission-plugins instead. Will be "
        "removed in a future version.",
        rewrite=_admission_control,
    ),
    "apiserver-count": Deprecated(
        "apiserver-count is deprecated and will be removed in a future version.",
        _int,
        now="apiserver-count",  # kept: --endpoint-reconciler-type=master-count reads it
    ),
    "audit-webhook-batch-initial-backoff": Deprecated(
        "Deprecated, use --audit-webhook-initial-backoff instead.",
        now="audit-webhook-initial-backoff",
    ),
    "default-watch-cache-size": Deprecated(
        "watch caches are sized automatically and this flag will be removed in a future version",
        _int,
    ),
    "enable-logs-handler": Deprecated(
        "Log handler functionality is deprecated", _bool, boolean=True
    ),
    "kubelet-port": Deprecated("kubelet-port is deprecated and will be removed.", _uint),
    "kubelet-read-only-port": Deprecated(
        "kubelet-read-only-port is deprecated and will be removed.", _uint
    ),
}


def extract(args: list[str], out: TextIO | None = None) -> list[str]:
    """``args`` without the deprecated flags (rewritten to their successor where one is),
    after writing pflag's warning for each; a bad value is pflag's UsageError."""
    stream = out if out is not None else sys.stderr
    kept: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        name, sep, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        spec = DEPRECATED.get(name)
        if spec is None:
            kept.append(arg)
            continue
        if not sep:
            if spec.boolean:
                value = "true"
            elif i < len(args):
                value, i = args[i], i + 1
            else:
                raise usage.UsageError(f"flag needs an argument: --{name}")
        problem = spec.check(value)
        if problem is not None:
            raise usage.UsageError(f'invalid argument "{value}" for "--{name}" flag: {problem}')
        stream.write(f"Flag --{name} has been deprecated, {spec.message}\n")
        if spec.now:
            kept.append(f"--{spec.now}={value}")
        if spec.rewrite is not None:
            kept.extend(spec.rewrite(value, args))
    return kept
