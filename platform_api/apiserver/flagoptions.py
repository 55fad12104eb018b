"""twistd options with kube's command-line conventions, for every process we ship.

Booleans may be given bare (``--leader-elect``) or with ``=value``; an unknown flag is
pflag's ``unknown flag: --x``; any error is one ``Error: ...`` line and exit status 1,
as kube's commands end.  Subclasses name their ``FLAGS`` (name, default, help) and
``BOOL_FLAGS``, and turn the given values into their configuration in ``configure``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
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


class FlagOptions(usage.Options):
    synopsis = "[options]"
    FLAGS: Sequence[Flag] = ()
    BOOL_FLAGS: Sequence[str] = ()

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
            super().parseOptions(self.rewrite(args))
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
