"""PodTolerationRestriction: namespace default and allowed tolerations (kube's plugin).

A new pod gets its namespace's ``scheduler.alpha.platform.io/defaultTolerations`` (else
the plugin configuration's ``default``) merged into its own; a pod with a cpu or memory
request or limit also tolerates memory pressure.  Its tolerations must then all be
covered by the namespace's ``tolerationsWhitelist`` (else the configured ``whitelist``),
when there is one.  Both annotations hold a JSON list of tolerations.
"""

from __future__ import annotations

import json
from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.admission.quota.scopes import is_best_effort
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.registry.store import Store
from platform_api.scheme import nodetaints
from platform_api.validation.tolerations import (
    merge_tolerations,
    tolerates_superset,
    validate_tolerations,
)

Obj = dict[str, Any]
DEFAULT_TOLERATIONS = "scheduler.alpha.platform.io/defaultTolerations"
WHITELIST = "scheduler.alpha.platform.io/tolerationsWhitelist"


def namespace_tolerations(namespace: Obj, key: str) -> list[Obj] | None:
    """The tolerations an annotation lists (None when the namespace has no such one)."""
    annotations = namespace.get("metadata", {}).get("annotations") or {}
    if key not in annotations:
        return None
    if not annotations[key]:
        return []
    try:
        listed = json.loads(annotations[key])
    except ValueError as e:
        raise errors.internal_error(e) from None
    if not isinstance(listed, list):
        raise errors.internal_error(f"{key}: not a list of tolerations")
    return [t for t in listed if isinstance(t, dict)]


def allowed(tolerations: list[Obj], whitelist: list[Obj]) -> bool:
    """kube's VerifyAgainstWhitelist: each toleration is covered by one allowed."""
    return all(any(tolerates_superset(w, t) for w in whitelist) for t in tolerations)


class PodTolerationRestriction:
    name = "PodTolerationRestriction"

    def __init__(
        self,
        namespaces: Store,
        default: list[Obj],
        whitelist: list[Obj],
        keys: nodetaints.TaintKeys = nodetaints.BRANDED,
    ) -> None:
        self._namespaces = namespaces
        self._default = default
        self._whitelist = whitelist
        self._memory_pressure = keys.memory_pressure  # tolerated by pods that are not best-effort

    @staticmethod
    def _handles(attrs: Attributes, obj: Obj | None) -> bool:
        rt = attrs.resource
        return (
            obj is not None
            and attrs.operation in ("CREATE", "UPDATE")
            and not attrs.subresource
            and (rt.group, rt.plural) == ("", "pods")
        )

    def _namespace(self, name: str) -> Obj:
        return self._namespaces.get("", name).object

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._handles(attrs, obj):
            return
        assert obj is not None
        extra: list[Obj] = []
        if attrs.operation == "CREATE":
            listed = namespace_tolerations(self._namespace(attrs.namespace), DEFAULT_TOLERATIONS)
            extra = list(self._default if listed is None else listed)
        if not is_best_effort(obj):
            pressure = self._memory_pressure
            extra.append({"key": pressure, "operator": "Exists", "effect": "NoSchedule"})
        if extra:
            spec = obj.setdefault("spec", {})
            spec["tolerations"] = merge_tolerations(spec.get("tolerations") or [], extra)
        self.validate(attrs, obj, old)

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._handles(attrs, obj):
            return
        assert obj is not None
        tolerations = (obj.get("spec") or {}).get("tolerations") or []
        if not tolerations:
            return
        whitelist = namespace_tolerations(self._namespace(attrs.namespace), WHITELIST)
        scope = "namespace"
        if whitelist is None:
            whitelist, scope = self._whitelist, "cluster"
        if whitelist and not allowed(tolerations, whitelist):
            # kube returns a plain error: a 500 without a reason.
            raise errors.StatusError(
                500,
                "",
                "pod tolerations (possibly merged with namespace default tolerations) "
                f"conflict with its {scope} whitelist",
            )


def read_settings(settings: Obj | None) -> tuple[list[Obj], list[Obj]]:
    """(default, whitelist) of the plugin's Configuration; ConfigError when invalid."""
    settings = settings or {}
    default = list(settings.get("default") or [])
    whitelist = list(settings.get("whitelist") or [])
    errs = validate_tolerations(default, "podtolerationrestriction.default")
    errs += validate_tolerations(whitelist, "podtolerationrestriction.whitelist")
    if errs:
        raise ConfigError(f"invalid config: [{', '.join(str(e) for e in errs)}]")
    return default, whitelist


def build(ctx: PluginContext) -> PodTolerationRestriction:
    default, whitelist = read_settings(ctx.plugin_settings("PodTolerationRestriction"))
    keys = nodetaints.keys(ctx.config.serve_upstream_groups)
    namespaces = ctx.stores[("", "v1", "namespaces")]
    return PodTolerationRestriction(namespaces, default, whitelist, keys)
