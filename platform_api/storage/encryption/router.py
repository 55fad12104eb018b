"""The transformer of a whole configuration: a storage key picks its resource's providers.

kube keeps one prefix transformer per group/resource; a key's resource uses its own
entry, else ``*.<group>``, else ``*.*``, else identity (which still refuses to read
encrypted data).  Storage keys are ``/<group or core>/<resource>/...``
(registry/store.py ``resource_prefix``), so the lookup is two splits and a dict hit.
"""

from __future__ import annotations

import time
from typing import Any

from platform_api.apiserver.metrics import REGISTRY, ReactorCounter, ReactorHistogram
from platform_api.storage.encryption import providers as p
from platform_api.storage.encryption.config import (
    LOCAL_PROVIDERS,
    EncryptionConfig,
    Provider,
    parse_group_resource,
)
from platform_api.storage.encryption.kms import KMSClient, KMSv2Envelope
from platform_api.storage.transformer import TransformError

# Lock-free families (~1 µs, not ~13, an update): updated by the LMDB writer thread and
# the reactor thread; a rare lost increment under a thread switch is the price.
OPERATIONS = ReactorCounter(
    "apiserver_storage_transformation_operations_total",
    "[ALPHA] Total number of transformations. Successful transformation will have a status "
    "'OK' and a varied status string when the transformation fails. The status, resource, "
    "and transformation_type fields can be used for alerting purposes. For example, you can "
    "monitor for encryption/decryption failures using the transformation_type (e.g., "
    "from_storage for decryption and to_storage for encryption). Additionally, these fields "
    "can be used to ensure that the correct transformers are applied to each resource.",
    ["resource", "status", "transformation_type", "transformer_prefix"],
    REGISTRY,
)
DURATION = ReactorHistogram(
    "apiserver_storage_transformation_duration_seconds",
    "[ALPHA] Latencies in seconds of value transformation operations.",
    ["transformation_type", "transformer_prefix"],
    [5e-6 * 2**i for i in range(25)],
    REGISTRY,
)
_IDENTITY = p.Identity()


class BuildError(Exception):
    """A provider could not be set up (kube: "error while building transformers")."""


def _provider(provider: Provider, reactor: Any, kms: list[KMSv2Envelope]) -> p.Prefixed:
    if provider.kind == "identity":
        return p.Prefixed(b"", _IDENTITY)
    if provider.kind in LOCAL_PROVIDERS:
        return p.keyed(provider.kind, provider.keys)
    config = provider.kms
    assert config is not None
    if config.api_version == "v1":
        raise BuildError(
            "KMSv1 is deprecated and will only receive security updates going forward. "
            "Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 "
            "feature."
        )
    envelope = KMSv2Envelope(config.name, KMSClient(config.endpoint, config.timeout), reactor)
    kms.append(envelope)
    return p.Prefixed(p.KMS_V2_PREFIX + config.name.encode() + b":", envelope)


class ResourceTransformers:
    """A ValueTransformer for every key, routed by resource."""

    def __init__(self, config: EncryptionConfig, reactor: Any) -> None:
        self.config = config
        self.kms: list[KMSv2Envelope] = []
        self._rules: dict[tuple[str, str], p.PrefixChoice] = {}
        for rule in config.rules:
            entries = [_provider(x, reactor, self.kms) for x in rule.providers]
            choice = p.PrefixChoice(entries, "no matching prefix found")
            for resource in rule.resources:
                self._rules.setdefault(parse_group_resource(resource), choice)
        self._routes: dict[bytes, tuple[str, p.PrefixChoice | None]] = {}

    def _route(self, key: bytes) -> tuple[str, p.PrefixChoice | None]:
        head = key[: key.find(b"/", key.find(b"/", 1) + 1) + 1]  # b"/<group>/<resource>/"
        route = self._routes.get(head)
        if route is None:
            _, group_b, resource_b, _ = (head + b"///").split(b"/", 3)
            group, resource = group_b.decode(), resource_b.decode()
            if group == "core":
                group = ""
            rules = self._rules
            choice = (
                rules.get((group, resource)) or rules.get((group, "*")) or rules.get(("*", "*"))
            )
            route = (f"{resource}.{group}" if group else resource, choice)
            self._routes[head] = route
        return route

    def to_storage(self, key: bytes, data: bytes, context: bytes | None = None) -> bytes:
        resource, choice = self._route(key)
        if choice is None:
            return data
        start = time.perf_counter()
        prefix = choice.entries[0].prefix.decode() or "identity"
        try:
            out = choice.to_storage(context or key, data)
        except TransformError:
            OPERATIONS.inc(resource, "Unknown", "to_storage", prefix)
            raise
        DURATION.observe(time.perf_counter() - start, "to_storage", prefix)
        OPERATIONS.inc(resource, "OK", "to_storage", prefix)
        return out

    def from_storage(
        self, key: bytes, data: bytes, context: bytes | None = None
    ) -> tuple[bytes, bool]:
        resource, choice = self._route(key)
        if choice is None:
            return _IDENTITY.from_storage(key, data)
        start = time.perf_counter()
        prefix = "unknown"
        for entry in choice.entries:
            if data.startswith(entry.prefix):
                prefix = entry.prefix.decode() or "identity"
                break
        try:
            out = choice.from_storage(context or key, data)
        except TransformError:
            OPERATIONS.inc(resource, "Unknown", "from_storage", prefix)
            raise
        DURATION.observe(time.perf_counter() - start, "from_storage", prefix)
        OPERATIONS.inc(resource, "OK", "from_storage", prefix)
        return out

    def prime(self) -> None:
        """Block until each KMS plugin answered once (or failed): start-up only."""
        for envelope in self.kms:
            envelope.prime()

    def health(self) -> str | None:
        """kube's ``kms-providers`` check: every plugin's error, named by its index."""
        errors = []
        for i, envelope in enumerate(self.kms):
            error = envelope.health()
            if error:
                errors.append(f"kms-provider-{i}: {error}")
        if not errors:
            return None
        return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"

    def close(self) -> None:
        for envelope in self.kms:
            envelope.client.close()
