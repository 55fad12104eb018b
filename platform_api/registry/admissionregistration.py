"""admissionregistration.platform.io/v1: webhook configurations, as kube's registry serves them.

Mutating and validating webhook configurations are cluster-scoped lists of webhooks.
This module holds their v1 defaults (``SetDefaults_*Webhook``, ``_Rule``,
``_ServiceReference``), their strategies (generation bumped when ``webhooks`` changes,
updates need a resourceVersion, update validation relaxed for what is already stored).
The validation rules are in ``admissionregistration_validation``, the ``kubectl get``
columns in ``endpoints/printers_admission``.
"""

from __future__ import annotations

from typing import Any

from platform_api.registry.admissionregistration_validation import (
    Options,
    update_options,
    validate_webhooks,
)
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation.field import FieldError

GROUP = "admissionregistration.platform.io"
MUTATING = "MutatingWebhookConfiguration"
VALIDATING = "ValidatingWebhookConfiguration"
# kube reserves names with this suffix for manifest-based configurations (an alpha feature,
# off by default: creating one is allowed, with a warning).
STATIC_SUFFIX = ".static.platform.io"


def _dicts(value: Any) -> list[Obj]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _webhook_defaults(hook: Obj, mutating: bool) -> None:
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    hook.setdefault("namespaceSelector", {})
    hook.setdefault("objectSelector", {})
    hook.setdefault("timeoutSeconds", 10)
    if mutating:
        hook.setdefault("reinvocationPolicy", "Never")
    for rule in _dicts(hook.get("rules")):
        rule.setdefault("scope", "*")
    service = (hook.get("clientConfig") or {}).get("service")
    if isinstance(service, dict):
        service.setdefault("port", 443)


@defaults(GROUP, MUTATING)
def _mutating(obj: Obj) -> None:
    for hook in _dicts(obj.get("webhooks")):
        _webhook_defaults(hook, mutating=True)


@defaults(GROUP, VALIDATING)
def _validating(obj: Obj) -> None:
    for hook in _dicts(obj.get("webhooks")):
        _webhook_defaults(hook, mutating=False)


def static_suffix_warnings(obj: Obj) -> list[str]:
    """kube warns on every write of such a name while manifest-based configuration is off."""
    name = obj.get("metadata", {}).get("name") or ""
    if not name.endswith(STATIC_SUFFIX):
        return []
    return [
        f'metadata.name: names ending with "{STATIC_SUFFIX}" are reserved for static '
        "manifest-based configurations and cannot be managed via the API"
    ]


class _WebhookConfigurationStrategy(GenericStrategy):
    core_metadata_checks = False  # apimachinery's ValidateObjectMeta(Update)
    mutating = False
    tracks_generation = True  # the kind's only "spec" is ``webhooks``, as kube compares
    allow_unconditional_update = False

    def validate(self, obj: Obj) -> list[FieldError]:
        return self._validate(obj, Options())

    def _validate(self, obj: Obj, opts: Options) -> list[FieldError]:
        errs = super().validate(obj)
        return errs + validate_webhooks(_dicts(obj.get("webhooks")), self.mutating, opts)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        # kube validates the whole new object again (its metadata as a create's)
        opts = update_options(_dicts(new.get("webhooks")), _dicts(old.get("webhooks")))
        return self._validate(new, opts)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        return static_suffix_warnings(obj)


@register(GROUP, MUTATING)
class MutatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    mutating = True


@register(GROUP, VALIDATING)
class ValidatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    pass
