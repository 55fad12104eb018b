"""Encryption at rest in the server: ``--encryption-provider-config`` to a transformer.

The configuration was already checked by config.py; here the KMS plugins are called
once (blocking, before the server serves, as kube primes them), the background probes
and the reload poll start on the reactor, and stop at reactor shutdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.apiserver.health import HealthCheck

if TYPE_CHECKING:
    from platform_api.storage.encryption.dynamic import EncryptionAtRest


def build_encryption(config: ServerConfig, reactor: Any) -> EncryptionAtRest | None:
    """The storage transformer, or None (values stored as they are) without the flag.
    The providers (PyNaCl, the KMS plugins' gRPC) are imported only for a server that
    encrypts: ~40 ms of every other start."""
    if not config.encryption_provider_config:
        return None
    from platform_api.storage.encryption.config import EncryptionConfigError  # noqa: PLC0415
    from platform_api.storage.encryption.dynamic import EncryptionAtRest  # noqa: PLC0415

    try:
        encryption = EncryptionAtRest(
            config.encryption_provider_config,
            config.encryption_provider_config_automatic_reload,
            reactor,
        )
    except EncryptionConfigError as e:
        raise ConfigError(str(e)) from None
    encryption.start()
    if hasattr(reactor, "addSystemEventTrigger"):
        reactor.addSystemEventTrigger("before", "shutdown", encryption.stop)
    return encryption


def encryption_checks(encryption: EncryptionAtRest | None) -> list[HealthCheck]:
    """kube's ``kms-providers`` check, for /healthz and /readyz (never /livez)."""
    if encryption is None:
        return []
    return [HealthCheck(name, check) for name, check in encryption.health_checks()]
