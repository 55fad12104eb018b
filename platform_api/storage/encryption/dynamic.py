"""Encryption at rest as the server holds it: one configuration now, swapped on reload.

``--encryption-provider-config-automatic-reload``: kube watches the file and, when its
content hash changes, loads it, builds the new transformers, probes their KMS plugins
and swaps only when they are healthy; a bad file keeps the old configuration (and is
logged).  We poll the file's content hash every ``RELOAD_INTERVAL`` seconds.  Health:
kube registers one ``kms-providers`` check (healthz and readyz, not livez) when reload
is on or KMS v2 plugins are used; reload on without KMS leaves it a no-op check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from twisted.internet.defer import gatherResults
from twisted.logger import Logger

from platform_api.storage.encryption.config import (
    EncryptionConfig,
    EncryptionConfigError,
    content_hash,
    load,
)
from platform_api.storage.encryption.router import BuildError, ResourceTransformers
from platform_api.storage.transformer import TransformError

log = Logger()
RELOAD_INTERVAL = 1.0
HEALTH_CHECK = "kms-providers"


def check(path: str, reload: bool) -> EncryptionConfig:
    """Everything that can be refused before start-up, in kube's words (no plugin calls)."""
    config = load(path, reload)
    for rule in config.rules:
        for provider in rule.providers:
            if provider.kms is not None and provider.kms.api_version == "v1":
                raise EncryptionConfigError(
                    "error while building transformers: KMSv1 is deprecated and will only "
                    "receive security updates going forward. Use KMSv2 instead.  Set "
                    "--feature-gates=KMSv1=true to use the deprecated KMSv1 feature."
                )
    return config


class EncryptionAtRest:
    """The ValueTransformer LMDBStorage is given; delegates to the current configuration."""

    def __init__(self, path: str, reload: bool, reactor: Any) -> None:
        self.path = path
        self.reload = reload
        self._reactor = reactor
        try:
            config = check(path, reload)
            self.current = ResourceTransformers(config, reactor)
        except BuildError as e:
            raise EncryptionConfigError(f"error while building transformers: {e}") from None
        self.current.prime()
        self._calls: list[Any] = []
        self._stopped = False
        self._reloading = False
        self._retired: list[ResourceTransformers] = []
        self._reactor_thread = threading.get_ident()  # made on the reactor's thread

    def to_storage(self, key: bytes, data: bytes, context: bytes | None = None) -> bytes:
        return self.current.to_storage(key, data, context)

    def from_storage(
        self, key: bytes, data: bytes, context: bytes | None = None
    ) -> tuple[bytes, bool]:
        try:
            return self.current.from_storage(key, data, context)
        except TransformError:
            # Under --workers (or beside other replicas) a sibling may have reloaded a
            # rotated file and written with its new key before our poll: look now.
            on_reactor = threading.get_ident() == self._reactor_thread  # not the writer's
            if not self.reload or not on_reactor or not self._reload_if_changed():
                raise
            return self.current.from_storage(key, data, context)

    def health_checks(self) -> list[tuple[str, Callable[[], str | None]]]:
        """(name, check) pairs for /healthz and /readyz."""
        if self.reload or self.current.kms:
            return [(HEALTH_CHECK, self.health)]
        return []

    def health(self) -> str | None:
        return self.current.health()

    # -- background work ----------------------------------------------------------------

    def start(self) -> None:
        self._schedule_probes(self.current)
        if self.reload:
            self._later(RELOAD_INTERVAL, self._poll)

    def stop(self) -> None:
        self._stopped = True
        for call in self._calls:
            if call.active():
                call.cancel()
        self._calls.clear()
        for old in [*self._retired, self.current]:
            old.close()
        self._retired.clear()

    def _later(self, delay: float, fn: Callable[[], Any]) -> None:
        if self._stopped:
            return
        self._calls = [c for c in self._calls if c.active()]
        self._calls.append(self._reactor.callLater(delay, fn))

    def _schedule_probes(self, transformers: ResourceTransformers) -> None:
        """kube's background probe: every minute when healthy, every 10 s when not; a
        new key ID in Status makes a new seed (key rotation)."""
        for envelope in transformers.kms:

            def tick(envelope: Any = envelope) -> None:
                if transformers is not self.current:
                    return  # replaced by a reload
                d = envelope.probe()
                d.addBoth(lambda _: self._later(envelope.next_interval(), tick))

            self._later(envelope.next_interval(), tick)

    def _poll(self) -> None:
        try:
            self._reload_if_changed()
        finally:
            self._later(RELOAD_INTERVAL, self._poll)

    def _reload_if_changed(self) -> bool:
        """Load the file if it changed; whether the new configuration is in use now (one
        with KMS plugins is swapped in once they answer their probes)."""
        if self._reloading:
            return False
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return False
        if content_hash(data) == self.current.config.content_hash:
            return False
        try:
            candidate = ResourceTransformers(load(self.path, True), self._reactor)
        except (EncryptionConfigError, BuildError) as e:
            log.error("failed to reload encryption configuration: {error}", error=str(e))
            self.current = _with_hash(self.current, data)
            return False
        self._reloading = True
        d = gatherResults([envelope.probe() for envelope in candidate.kms])
        d.addBoth(lambda _: self._swap(candidate))
        return self.current is candidate

    def _swap(self, candidate: ResourceTransformers) -> None:
        self._reloading = False
        error = candidate.health()
        if error:
            log.error("encryption configuration reload refused: {error}", error=error)
            candidate.close()
            return
        old, self.current = self.current, candidate
        log.info("loaded new encryption configuration from {path}", path=self.path)
        self._schedule_probes(candidate)
        self._retired.append(old)
        self._later(10.0, lambda: self._close(old))  # in-flight calls finish first

    def _close(self, old: ResourceTransformers) -> None:
        if old in self._retired:
            self._retired.remove(old)
            old.close()


def _with_hash(current: ResourceTransformers, data: bytes) -> ResourceTransformers:
    """Remember a refused file's hash so it is not retried every poll (kube does the same)."""
    current.config = replace(current.config, content_hash=content_hash(data))
    return current
