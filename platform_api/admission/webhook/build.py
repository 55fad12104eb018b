"""Assembling the two webhook plugins from the server's stores and authorizer."""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.equivalence import Equivalence
from platform_api.admission.matching import Authorize
from platform_api.admission.webhook.caller import WebhookCaller
from platform_api.admission.webhook.credentials import load_admission_config
from platform_api.admission.webhook.dispatch import WebhookAdmission
from platform_api.admission.webhook.hooks import HookSource
from platform_api.registry.serviceresolver import ServiceResolver
from platform_api.registry.store import Store
from platform_api.scheme.types import outbound_group
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub

GROUP = "admissionregistration.platform.io"
MUTATING, VALIDATING = "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"


def build_webhooks(
    plugins: tuple[str, ...],
    storage: Storage,
    hub: WatchHub,
    stores: dict[tuple[str, str, str], Store],
    reactor: Any,
    authorize: Authorize,
    upstream: bool,
    admission_config: str = "",
    equivalence: Equivalence | None = None,
) -> WebhookAdmission | None:
    """The webhook plugins ``plugins`` leaves on (None when neither is)."""
    if MUTATING not in plugins and VALIDATING not in plugins:
        return None

    def source(plural: str, mutating: bool) -> HookSource | None:
        store = stores.get((GROUP, "v1", plural))
        if store is None:
            return None
        return HookSource(storage, hub, store.list_prefix(""), mutating)

    namespaces = stores[("", "v1", "namespaces")]

    def namespace_labels(name: str) -> dict[str, str] | None:
        try:
            obj = namespaces.get("", name).object
        except errors.StatusError:
            return None
        return dict(obj.get("metadata", {}).get("labels") or {})

    resolver = ServiceResolver(stores[("", "v1", "services")], stores[("", "v1", "endpoints")])
    review_group = outbound_group("admission.platform.io", upstream)
    return WebhookAdmission(
        source("mutatingwebhookconfigurations", True) if MUTATING in plugins else None,
        source("validatingwebhookconfigurations", False) if VALIDATING in plugins else None,
        WebhookCaller(
            reactor, resolver, load_admission_config(admission_config) if admission_config else {}
        ),
        namespace_labels,
        authorize,
        review_group,
        equivalence,
    )
