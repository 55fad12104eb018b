"""The namespace names the plugin makes."""

from __future__ import annotations

import re

from platform_api.testing.plugin import namespace_name

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_name_tells_the_test_and_is_a_valid_label() -> None:
    name = namespace_name("test_watch[lightkube-2]")
    assert re.fullmatch(r"test-watch-lightkube-2-[0-9a-f]{6}", name)


def test_names_are_unique() -> None:
    assert len({namespace_name("test_a") for _ in range(50)}) == 50


def test_long_and_odd_names_are_cut_to_a_label() -> None:
    for test_name in ("x" * 200, "T_" * 40 + "-", "___", "[é]", "9lives", "a" * 55 + "_bc"):
        name = namespace_name(test_name)
        assert len(name) <= 63
        assert DNS1123_LABEL.match(name), name
    assert re.fullmatch(r"test-[0-9a-f]{6}", namespace_name("___"))
