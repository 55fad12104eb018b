"""Test fixtures for code that talks to the API: a real server per session, a namespace per test.

The pytest plugin (``platform_api.testing.plugin``) is registered under the ``pytest11``
entry point, so installing the package is all it takes to use its fixtures.
"""

from platform_api.testing.server import ApiServer

__all__ = ["ApiServer"]
