"""setup.cfg lists its packages by hand: every package directory must be among them, or a
non-editable install silently lacks it."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_every_package_is_listed() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("platform_api", "webhooks")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found - listed == set()
