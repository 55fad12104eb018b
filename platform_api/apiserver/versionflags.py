"""kube's compatibility-version flags: ``--emulated-version``,
``--min-compatibility-version`` and the two ``*-forward-compatible`` switches.

kube 1.36 can emulate 1.33 to 1.35 (their APIs and feature defaults); this server is
1.36 and emulates nothing older, so it takes the flags as kube parses and bounds them
(component-base's compatibility registry, in its words) and then refuses an emulation
it cannot give, rather than serving 1.36 under an older name.  A minimum compatibility
version inside kube's bounds changes nothing here: this server keeps no state a
rollback to an older release could not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from platform_api import gotext
from platform_api.apiserver.flagvalues import ConfigError, parse_bool

BINARY = (1, 36)
OLDEST = (BINARY[0], BINARY[1] - 3)  # kube emulates and stays compatible three back
_VERSION = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$")
Version = tuple[int, ...]


def _text(version: Version) -> str:
    return ".".join(str(part) for part in version)


def parse_version(text: str) -> Version:
    """apimachinery's version.Parse, as far as these flags need it (generic form)."""
    match = _VERSION.match(text)
    if match is None:
        raise ConfigError(f"could not parse {gotext.quote(text)} as version")
    parts = match.group(1).split(".")
    if len(parts) < 2:
        raise ConfigError(f"illegal version string {gotext.quote(text)}")
    if parts[0].startswith("0") and parts[0] != "0":
        raise ConfigError(
            f"illegal zero-prefixed version component {gotext.quote(parts[0])} in {gotext.quote(text)}"
        )
    return tuple(int(part) for part in parts)


def kube_version(text: str | None) -> Version | None:
    """A ``[component=]major.minor`` list as component-base's toVersionMap reads it; the
    ``kube`` component's version (the only component this server registers)."""
    if not text:
        return None
    found: dict[str, Version] = {}
    for item in text.split(","):
        component, _, value = item.partition("=") if "=" in item else ("kube", "", item)
        component, value = component.strip(), value.strip()
        version = parse_version(value)
        if len(version) > 2 and version[2] != 0:
            raise ConfigError(f"patch version not allowed, got: {component}={_text(version)}")
        if component in found:
            raise ConfigError(
                f"duplicate version flag, {component}={_text(found[component])} and "
                f"{component}={_text(version)}"
            )
        found[component] = version
    for component in found:
        if component != "kube":
            raise ConfigError(f"component not registered: {component}")
    return found.get("kube")


def check(given: Callable[[str], str | None]) -> None:
    """The four flags, bounded as kube's effectiveVersion.Validate bounds them; then an
    emulation of an older release is refused (this server serves v1.36 only)."""
    emulated = kube_version(given("emulated-version")) or BINARY
    emulated = emulated[:2]
    floor = OLDEST
    least = kube_version(given("min-compatibility-version"))
    least = least[:2] if least else max((emulated[0], emulated[1] - 1), floor)
    problems = []
    if not floor <= emulated <= BINARY:
        problems.append(
            f"emulation version {_text(emulated)} is not between [{_text(floor)}, "
            f"{_text(BINARY)}.0]"
        )
    if not floor <= least <= emulated:
        problems.append(
            f"minCompatibilityVersion version {_text(least)} is not between "
            f"[{_text(floor)}, {_text(emulated)}]"
        )
    if problems:
        raise ConfigError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")
    if emulated != BINARY:
        raise ConfigError(
            f"--emulated-version={_text(emulated)}: this server is v{_text(BINARY)} and does "
            "not emulate older releases"
        )
    for flag, option in (
        ("emulation-forward-compatible", "EmulationForwardCompatible"),
        ("runtime-config-emulation-forward-compatible", "RuntimeConfigEmulationForwardCompatible"),
    ):
        text = given(flag)
        if text is not None and parse_bool(flag, text):
            raise ConfigError(
                f"ServerRunOptions.{option} cannot be set to true if the emulation version "
                "is the same as the binary version"
            )
