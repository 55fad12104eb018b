"""PodNodeSelector: a namespace's node selector is merged into its pods' (kube's plugin).

The selector comes from the namespace's ``scheduler.alpha.platform.io/node-selector``
annotation, else the configuration's ``clusterDefaultNodeSelector``; a pod's own
selector may not contradict it.  The configuration may also give a namespace a
whitelist (``podNodeSelectorPluginConfig: {<namespace>: "k=v,..."}``) that every label
of its pods' selectors must be in.  Selectors are ``key=value`` lists.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.registry.store import Store
from platform_api.validation.names import is_label_value, is_qualified_name

Obj = dict[str, Any]
ANNOTATION = "scheduler.alpha.platform.io/node-selector"
CLUSTER_DEFAULT = "clusterDefaultNodeSelector"
CONFLICT = "pod node label selector conflicts with its namespace node label selector"


def labels_map(selector: str) -> dict[str, str]:
    """kube's ConvertSelectorToLabelsMap: ``k=v`` pairs, comma-separated (500 when bad)."""
    out: dict[str, str] = {}
    if not selector:
        return out
    for label in selector.split(","):
        parts = label.split("=")
        if len(parts) != 2:
            raise errors.StatusError(500, "", f"invalid selector: [{' '.join(parts)}]")
        key, value = parts[0].strip(), parts[1].strip()
        problems = is_qualified_name(key) or is_label_value(value)
        if problems:
            raise errors.StatusError(500, "", "; ".join(problems))
        out[key] = value
    return out


def conflicts(a: dict[str, str], b: dict[str, str]) -> bool:
    return any(key in b and b[key] != value for key, value in a.items())


class PodNodeSelector:
    name = "PodNodeSelector"

    def __init__(self, namespaces: Store, config: dict[str, str]) -> None:
        self._namespaces = namespaces
        self._config = config

    def _selector(self, namespace: str) -> dict[str, str]:
        try:
            ns = self._namespaces.get("", namespace).object
        except errors.StatusError:
            raise errors.internal_error(f"namespace {namespace} does not exist") from None
        annotations = ns.get("metadata", {}).get("annotations") or {}
        if ANNOTATION in annotations:
            return labels_map(annotations[ANNOTATION])
        return labels_map(self._config.get(CLUSTER_DEFAULT, ""))

    @staticmethod
    def _handles(attrs: Attributes, obj: Obj | None) -> bool:
        rt = attrs.resource
        return (
            obj is not None
            and attrs.operation == "CREATE"
            and not attrs.subresource
            and (rt.group, rt.plural) == ("", "pods")
        )

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._handles(attrs, obj):
            return
        assert obj is not None
        spec = obj.setdefault("spec", {})
        selector = self._selector(attrs.namespace)
        own = spec.get("nodeSelector") or {}
        if conflicts(selector, own):
            raise errors.forbidden("pods", "", obj.get("metadata", {}).get("name", ""), CONFLICT)
        merged = {**selector, **own}
        if merged or "nodeSelector" in spec:
            spec["nodeSelector"] = merged
        self.validate(attrs, obj, old)

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if not self._handles(attrs, obj):
            return
        assert obj is not None
        name = obj.get("metadata", {}).get("name", "")
        own = (obj.get("spec") or {}).get("nodeSelector") or {}
        if conflicts(self._selector(attrs.namespace), own):
            raise errors.forbidden("pods", "", name, CONFLICT)
        whitelist = labels_map(self._config.get(attrs.namespace, ""))
        if whitelist and any(whitelist.get(k) != v for k, v in own.items()):
            why = "pod node label selector labels conflict with its namespace whitelist"
            raise errors.forbidden("pods", "", name, why)


def build(ctx: PluginContext) -> PodNodeSelector:
    settings = ctx.plugin_settings("PodNodeSelector") or {}
    # kube's decoder matches the field name case-insensitively.
    config: dict[str, str] = next(
        (v for k, v in settings.items() if k.lower() == "podnodeselectorpluginconfig"), {}
    )
    return PodNodeSelector(ctx.stores[("", "v1", "namespaces")], dict(config or {}))
