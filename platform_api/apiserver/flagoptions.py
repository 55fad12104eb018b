"""twistd options with kube's command-line conventions, for every process we ship.

Booleans may be given bare (``--leader-elect``) or with ``=value``; an unknown flag is
pflag's ``unknown flag: --x``; any error is one ``Error: ...`` line and exit status 1,
as kube's commands end.  A flag pflag gathers (a slice, array or map: ``--x=a --x=b``)
keeps every occurrence, where getopt would keep the last.  Subclasses name their
``FLAGS`` (name, default, help), ``BOOL_FLAGS`` and ``GATHERED`` flags, and turn the
given values into their configuration in ``configure``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from twisted.python import usage

from platform_api.apiserver.flagvalues import ConfigError

Flag = tuple[str, str, str]  # name, default shown in --help, help text


def parameters(flags: Sequence[Flag]) -> list[list[Any]]:
    """twistd's ``optParameters`` for kube-style flags (no defaults: unset means unset)."""
    return [
        [name, None, None, f"{text} (default: {default})" if default else text]
        for name, default, text in flags
    ]


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"Error: {message}\n")
    raise SystemExit(1)


def gather(args: list[str], gathered: Mapping[str, str]) -> list[str]:
    """``args`` with each gathered flag's occurrences folded into its first, as
    ``--name=<values joined>`` (``--name value`` and ``--name=value`` alike)."""
    out: list[str] = []
    first: dict[str, int] = {}
    values: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            out.extend(args[i - 1 :])
            break
        name, eq, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        if name not in gathered:
            out.append(arg)
            continue
        if not eq:
            if i >= len(args):
                out.append(arg)  # getopt reports the missing value
                continue
            value, i = args[i], i + 1
        if name not in first:
            first[name] = len(out)
            out.append("")
        values.setdefault(name, []).append(value)
    for name, at in first.items():
        out[at] = f"--{name}={gathered[name].join(values[name])}"
    return out


class FlagOptions(usage.Options):
    synopsis = "[options]"
    FLAGS: Sequence[Flag] = ()
    BOOL_FLAGS: Sequence[str] = ()
    GATHERED: Mapping[str, str] = {}

    def rewrite(self, args: list[str]) -> list[str]:
        """A last look at the arguments before parsing (deprecated spellings)."""
        return args

    def configure(self, given: dict[str, str | None]) -> None:
        """Build the configuration from the given flags; raise ConfigError."""
        raise NotImplementedError

    def parseOptions(self, options: list[str] | None = None) -> None:
        args = list(sys.argv[1:] if options is None else options)
        bare = {f"--{name}" for name in self.BOOL_FLAGS}
        args = [f"{a}=true" if a in bare else a for a in args]
        try:
            super().parseOptions(gather(self.rewrite(args), self.GATHERED))
        except usage.UsageError as e:
            text = str(e)
            flag = re.search(r"(--?[\w-]+)", text)
            if "not recognized" in text and flag:  # getopt's "option --foo not recognized"
                text = f"unknown flag: {flag.group(1)}"
            fail(text)

    def postOptions(self) -> None:
        try:
            self.configure({name: self[name] for name, _, _ in self.FLAGS})
        except ConfigError as e:
            fail(str(e))
