"""YAML answers: what this server writes reads back the same, by go-yaml v2's rules."""

from __future__ import annotations

from platform_api.codec import parse_yaml
from platform_api.codec.text import yaml_dumps


def test_strings_go_yaml_would_read_as_booleans_are_quoted() -> None:
    """go-yaml v2 (and parse_yaml, which follows it) read a plain y or n as a boolean."""
    obj = {"labels": {"x": "y", "n": "N", "Y": "yes"}, "flag": True, "off": False}
    text = yaml_dumps(obj)
    assert text == (b"flag: true\nlabels:\n  'Y': 'yes'\n  'n': 'N'\n  x: 'y'\n'off': false\n")
    assert parse_yaml(text)[0] == obj
