"""The pytest plugin: ``platform_apiserver`` (one server per session, or per pytest-xdist
worker) and ``platform_namespace`` (a fresh namespace per test).

Flags for the server: ``--platform-apiserver-arg=--flag=value`` (repeatable). To test
against a server already running, name its kubeconfig in ``PLATFORM_APISERVER_KUBECONFIG``
or ``--platform-apiserver-kubeconfig``; then no server is started.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from platform_api.testing.server import ApiServer

KUBECONFIG_ENV = "PLATFORM_APISERVER_KUBECONFIG"
_MAX_NAME = 63  # a namespace name is a DNS-1123 label


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("platform-apiserver", "platform API server fixtures")
    group.addoption(
        "--platform-apiserver-arg",
        action="append",
        default=[],
        metavar="FLAG",
        help="extra flag for the test server, repeatable; write it with '=', e.g. "
        "--platform-apiserver-arg=--token-auth-file=tokens.csv",
    )
    group.addoption(
        "--platform-apiserver-kubeconfig",
        default=os.environ.get(KUBECONFIG_ENV, ""),
        metavar="PATH",
        help=f"use the server this kubeconfig names instead of starting one "
        f"(default: ${KUBECONFIG_ENV})",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("platform_apiserver_kubeconfig") and config.getoption(
        "platform_apiserver_arg"
    ):
        raise pytest.UsageError(
            "--platform-apiserver-arg does not apply to a server that is already running"
        )


@pytest.fixture(scope="session")
def platform_apiserver(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiServer]:
    """A running API server with its admin credentials; stopped at the end of the session."""
    external = request.config.getoption("platform_apiserver_kubeconfig")
    args = request.config.getoption("platform_apiserver_arg")
    if external:
        yield ApiServer.connect(Path(external), tmp_path_factory.mktemp("platform-apiserver"))
        return
    server = ApiServer.start(tmp_path_factory.mktemp("platform-apiserver"), *args)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def platform_namespace(
    platform_apiserver: ApiServer, request: pytest.FixtureRequest
) -> Iterator[str]:
    """The name of a namespace made for this test; its deletion is started afterwards."""
    name = namespace_name(request.node.name)
    platform_apiserver.create_namespace(name)
    yield name
    platform_apiserver.delete_namespace(name)


def namespace_name(test_name: str) -> str:
    """A valid, unique namespace name that tells which test made it."""
    suffix = secrets.token_hex(3)
    base = re.sub(r"[^a-z0-9]+", "-", test_name.lower()).strip("-")
    base = base[: _MAX_NAME - len(suffix) - 1].rstrip("-") or "test"
    return f"{base}-{suffix}"
