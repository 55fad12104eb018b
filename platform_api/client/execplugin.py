"""The ``user.exec`` credential plugin of kubeconfig files (ExecCredential).

The plugin runs with ``PLATFORM_EXEC_INFO`` describing the request (and the cluster,
with ``provideClusterInfo``); it prints an ExecCredential whose status holds a token
or a client certificate and key, optionally with an expiry.  Credentials are reused
until they expire or the server answers 401.  A server process has no terminal, so
``interactiveMode: Always`` cannot run here.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from twisted.internet.utils import getProcessOutputAndValue

GROUP = "client.authentication.platform.io"
VERSIONS = (f"{GROUP}/v1", f"{GROUP}/v1beta1")
MODES = ("Never", "IfAvailable", "Always")
CLUSTER_EXTENSION = f"{GROUP}/exec"


class ExecError(ValueError):
    pass


@dataclass(frozen=True)
class ExecConfig:
    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    install_hint: str = ""
    provide_cluster_info: bool = False
    interactive_mode: str = "IfAvailable"
    base_dir: str = "."

    @classmethod
    def parse(cls, block: dict[str, Any], base_dir: str) -> ExecConfig:
        command, version = block.get("command") or "", block.get("apiVersion") or ""
        if not command:
            raise ExecError("exec plugin: command must be specified")
        if version not in VERSIONS:
            raise ExecError(f"exec plugin: invalid apiVersion {version!r}")
        mode = block.get("interactiveMode") or ("" if version.endswith("/v1") else "IfAvailable")
        if not mode:
            raise ExecError("exec plugin: interactiveMode must be specified for v1")
        if mode not in MODES:
            raise ExecError(f"exec plugin: invalid interactiveMode {mode!r}")
        env = tuple((str(e["name"]), str(e.get("value", ""))) for e in block.get("env") or ())
        return cls(
            command,
            version,
            tuple(str(a) for a in block.get("args") or ()),
            env,
            block.get("installHint") or "",
            bool(block.get("provideClusterInfo")),
            mode,
            base_dir,
        )

    def executable(self) -> str:
        """A path with a separator is relative to the kubeconfig; a bare name uses PATH."""
        if os.sep in self.command:
            path = os.path.join(self.base_dir, self.command)
            if os.access(path, os.X_OK):
                return path
        else:
            found = shutil.which(self.command)
            if found:
                return found
        hint = f"\n\n{self.install_hint}" if self.install_hint else ""
        raise ExecError(f"exec: executable {self.command} not found{hint}")


@dataclass
class Credential:
    token: str = ""
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    expires: float | None = None


@dataclass
class ExecCredentials:
    """Runs the plugin when needed and keeps its answer."""

    config: ExecConfig
    cluster: dict[str, Any] | None = None  # spec.cluster, when provideClusterInfo is set
    clock: Callable[[], float] = time.time
    runner: Callable[..., Any] = getProcessOutputAndValue
    _cached: Credential | None = field(default=None, init=False)

    def invalidate(self) -> None:
        self._cached = None

    async def get(self) -> Credential:
        cached = self._cached
        if cached is not None and (cached.expires is None or cached.expires > self.clock()):
            return cached
        self._cached = await self._run()
        return self._cached

    async def _run(self) -> Credential:
        cfg = self.config
        if cfg.interactive_mode == "Always":
            raise ExecError(
                "exec plugin cannot support interactive mode: standard input is not a terminal"
            )
        info: dict[str, Any] = {"interactive": False}
        if cfg.provide_cluster_info and self.cluster is not None:
            info["cluster"] = self.cluster
        request = {"apiVersion": cfg.api_version, "kind": "ExecCredential", "spec": info}
        env = {**os.environ, **dict(cfg.env), "PLATFORM_EXEC_INFO": orjson.dumps(request).decode()}
        out, err, code = await self.runner(cfg.executable(), cfg.args, env=env)
        if code != 0:
            text = err.decode("utf-8", "replace").strip()
            raise ExecError(f"exec: executable {cfg.command} failed with exit code {code}: {text}")
        return self._parse(out)

    def _parse(self, out: bytes) -> Credential:
        try:
            answer = orjson.loads(out)
        except orjson.JSONDecodeError as e:
            raise ExecError(f"exec plugin: decoding stdout: {e}") from None
        version = answer.get("apiVersion") if isinstance(answer, dict) else None
        if version != self.config.api_version:
            raise ExecError(
                f"exec plugin is configured to use API version {self.config.api_version}, "
                f"plugin returned version {version}"
            )
        status = answer.get("status") or {}
        token = status.get("token") or ""
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        if bool(cert) != bool(key):
            raise ExecError("exec plugin: client certificate and key must both be set")
        if not token and not cert:
            raise ExecError("exec plugin didn't return a token or cert/key pair")
        expires = None
        if status.get("expirationTimestamp"):
            stamp = str(status["expirationTimestamp"]).replace("Z", "+00:00")
            expires = datetime.fromisoformat(stamp).timestamp()
        return Credential(
            token, cert.encode() if cert else None, key.encode() if key else None, expires
        )
