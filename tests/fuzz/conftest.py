"""Hypothesis profiles of the property tests: ``short`` by default, ``long`` from scripts/fuzz.

``PLATFORM_FUZZ_PROFILE=long`` (or ``PLATFORM_FUZZ_EXAMPLES=N``) raises the budget; the
short profile keeps the default run under a few seconds.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("short", max_examples=75, deadline=None, suppress_health_check=_SLOW_OK)
settings.register_profile(
    "long",
    max_examples=int(os.environ.get("PLATFORM_FUZZ_EXAMPLES", "3000")),
    deadline=None,
    suppress_health_check=_SLOW_OK,
)
settings.load_profile(os.environ.get("PLATFORM_FUZZ_PROFILE", "short"))
