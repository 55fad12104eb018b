"""kube's compatibility-version flags: parsed and bounded in component-base's words
(each message checked on the reference kube-apiserver v1.36), then an emulation of an
older release refused."""

from __future__ import annotations

import pytest

from platform_api.apiserver.config import from_flags
from platform_api.apiserver.flagvalues import ConfigError


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"emulated-version": "1.36"},
        {"emulated-version": " kube = 1.36 "},
        {"emulated-version": "v1.36"},
        {"min-compatibility-version": "1.34"},
        {"min-compatibility-version": "kube=1.36"},
        {"emulation-forward-compatible": "false"},
    ],
)
def test_accepted(flags: dict[str, str]) -> None:
    from_flags(flags)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"emulated-version": "abc"}, 'could not parse "abc" as version'),
        ({"emulated-version": "1"}, 'illegal version string "1"'),
        ({"emulated-version": "1.36.1"}, "patch version not allowed, got: kube=1.36.1"),
        ({"emulated-version": "foo=1.2"}, "component not registered: foo"),
        (
            {"emulated-version": "kube=1.36,kube=1.35"},
            "duplicate version flag, kube=1.36 and kube=1.35",
        ),
        ({"emulated-version": "1.37"}, "emulation version 1.37 is not between [1.33, 1.36.0]"),
        (
            {"emulated-version": "1.30"},
            "[emulation version 1.30 is not between [1.33, 1.36.0], minCompatibilityVersion "
            "version 1.33 is not between [1.33, 1.30]]",
        ),
        (
            {"min-compatibility-version": "1.32"},
            "minCompatibilityVersion version 1.32 is not between [1.33, 1.36]",
        ),
        (
            {"emulated-version": "1.35", "min-compatibility-version": "1.36"},
            "minCompatibilityVersion version 1.36 is not between [1.33, 1.35]",
        ),
        (
            {"emulated-version": "1.35"},
            "--emulated-version=1.35: this server is v1.36 and does not emulate older releases",
        ),
        (
            {"emulation-forward-compatible": "true"},
            "ServerRunOptions.EmulationForwardCompatible cannot be set to true if the "
            "emulation version is the same as the binary version",
        ),
        (
            {"runtime-config-emulation-forward-compatible": "true"},
            "ServerRunOptions.RuntimeConfigEmulationForwardCompatible cannot be set to true if "
            "the emulation version is the same as the binary version",
        ),
    ],
)
def test_refused_in_kubes_words(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_flags(flags)
    assert str(caught.value) == message
