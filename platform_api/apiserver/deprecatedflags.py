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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TextIO

from twisted.python import usage

from platform_api import goduration
from platform_api.admission.plugins import PLUGINS
from platform_api.apiserver.flagvalues import go_bool


def uint_value(text: str) -> str | None:
    return None if text.isdigit() else f'strconv.ParseUint: parsing "{text}": invalid syntax'


def int_value(text: str) -> str | None:
    body = text[1:] if text[:1] in "+-" else text
    return None if body.isdigit() else f'strconv.ParseInt: parsing "{text}": invalid syntax'


def bool_value(text: str) -> str | None:
    return (
        None
        if go_bool(text) is not None
        else f'strconv.ParseBool: parsing "{text}": invalid syntax'
    )


def any_value(text: str) -> str | None:
    return None


def duration_value(text: str) -> str | None:
    try:
        goduration.parse_duration(text)
    except ValueError as e:
        return str(e)
    return None


@dataclass(frozen=True)
class Deprecated:
    message: str  # kube's MarkDeprecated text
    check: Callable[[str], str | None] = any_value  # pflag's parse error for a bad value
    now: str = ""  # the flag that carries the value now, if any
    boolean: bool = False  # may be given bare
    # The flags that carry the value now, given the value and the whole command line.
    rewrite: Callable[[str, list[str]], list[str]] | None = None

    def notice(self, name: str) -> str:
        return f"Flag --{name} has been deprecated, {self.message}"

    def replacement(self, value: str, args: list[str]) -> list[str]:
        kept = [f"--{self.now}={value}"] if self.now else []
        return kept + (self.rewrite(value, args) if self.rewrite is not None else [])


class TakenFlag(Protocol):
    """A kube-apiserver flag taken off the command line before twistd parses it."""

    @property
    def check(self) -> Callable[[str], str | None]: ...

    @property
    def boolean(self) -> bool: ...

    def notice(self, name: str) -> str: ...

    def replacement(self, value: str, args: list[str]) -> list[str]: ...


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
        int_value,
        now="apiserver-count",  # kept: --endpoint-reconciler-type=master-count reads it
    ),
    "audit-webhook-batch-initial-backoff": Deprecated(
        "Deprecated, use --audit-webhook-initial-backoff instead.",
        now="audit-webhook-initial-backoff",
    ),
    "default-watch-cache-size": Deprecated(
        "watch caches are sized automatically and this flag will be removed in a future version",
        int_value,
    ),
    "enable-logs-handler": Deprecated(
        "Log handler functionality is deprecated", bool_value, boolean=True
    ),
    "kubelet-port": Deprecated("kubelet-port is deprecated and will be removed.", uint_value),
    "kubelet-read-only-port": Deprecated(
        "kubelet-read-only-port is deprecated and will be removed.", uint_value
    ),
}


def extract(
    args: list[str],
    out: TextIO | None = None,
    tables: tuple[Mapping[str, TakenFlag], ...] = (DEPRECATED,),
    taken: dict[str, str] | None = None,
) -> list[str]:
    """``args`` without the flags of ``tables`` (rewritten to their successor where one
    is), after writing each one's notice (pflag's warning for a deprecated flag); a bad
    value is pflag's UsageError.  ``taken``, if given, gets each flag's value (/flagz
    shows them; a flag given twice, its values joined by commas)."""
    stream = out if out is not None else sys.stderr
    kept: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        name, sep, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        spec = next((table[name] for table in tables if name in table), None)
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
        stream.write(spec.notice(name) + "\n")
        if taken is not None:
            taken[name] = f"{taken[name]},{value}" if name in taken else value
        kept.extend(spec.replacement(value, args))
    return kept
