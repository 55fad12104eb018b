"""Collection order for the whole suite: modules with slow cases first.

``--dist loadfile`` hands modules to the two xdist workers in collection order, a new one
to whichever finishes first; a 100 s module collected late left one worker running it
alone at the end of the run.  Longest first keeps both busy to the end.  Modules keep
their own order (some e2e cases build on the one before).
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow_modules = {str(item.fspath) for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: str(item.fspath) not in slow_modules)  # stable: order kept
