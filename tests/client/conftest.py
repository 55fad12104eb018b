"""A real API server process for the REST client and informer tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from platform_api.testing import ApiServer


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    """No controllers (nothing writes but the test); a 1 s watch history, so an old
    resourceVersion is soon answered with 410 Gone."""
    server = ApiServer.start(
        tmp_path_factory.mktemp("client"), "--controllers=", "--etcd-compaction-interval=1s"
    )
    yield server
    server.stop()
