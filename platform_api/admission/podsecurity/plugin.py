"""PodSecurity: kube's Pod Security admission (validating, on by default).

Pods are checked against their namespace's enforce level (refused with 403) and its
warn level (Warning headers); the pod templates of workload controllers only against
warn, so that a bad Deployment is flagged when written rather than when its pods are
refused.  Namespace labels are validated, and a namespace made stricter is told which
of its pods would now be refused.  kube's audit annotations are computed (``Verdict``)
but this server has no audit log to record them in.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext
from platform_api.admission.podsecurity.checks import items, sub
from platform_api.admission.podsecurity.config import Configuration, load
from platform_api.admission.podsecurity.evaluate import (
    evaluate_pod,
    exempt_runtime_class,
    existing_pod_warnings,
)
from platform_api.admission.podsecurity.levels import (
    AUDIT_LEVEL,
    AUDIT_VERSION,
    ENFORCE_LEVEL,
    ENFORCE_VERSION,
    PRIVILEGED,
    WARN_LEVEL,
    WARN_VERSION,
    Policy,
    compare_levels,
    policy_to_evaluate,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import ListOptions, Storage, StorageError, readable
from platform_api.validation import field as fe

Obj = dict[str, Any]
# Where each workload keeps its pod template (kube's DefaultPodSpecExtractor).
TEMPLATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "podtemplates"): ("template",),
    ("", "replicationcontrollers"): ("spec", "template"),
    ("apps", "replicasets"): ("spec", "template"),
    ("apps", "deployments"): ("spec", "template"),
    ("apps", "statefulsets"): ("spec", "template"),
    ("apps", "daemonsets"): ("spec", "template"),
    ("batch", "jobs"): ("spec", "template"),
    ("batch", "cronjobs"): ("spec", "jobTemplate", "spec", "template"),
}
# Pod subresources that cannot change the pod's spec; any other is checked.
IGNORED_POD_SUBRESOURCES = frozenset(
    ("exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status")
)
_MODES = (
    ("enforce", ENFORCE_LEVEL, ENFORCE_VERSION),
    ("audit", AUDIT_LEVEL, AUDIT_VERSION),
    ("warn", WARN_LEVEL, WARN_VERSION),
)


class PodSecurity:
    name = "PodSecurity"
    resources = frozenset({("", "namespaces"), ("", "pods"), *TEMPLATES})

    def __init__(
        self, config: Configuration, storage: Storage, namespaces: Store, pods: Store
    ) -> None:
        self.config = config
        self._storage = storage
        self._namespaces = namespaces
        self._pods = pods

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if attrs.operation not in ("CREATE", "UPDATE") or obj is None:
            return
        rt = attrs.resource
        target = (rt.group, rt.plural)
        if target == ("", "namespaces"):
            self._namespace(attrs, obj, old)
        elif target == ("", "pods"):
            self._pod(attrs, obj, old)
        elif target in TEMPLATES and not attrs.subresource:
            self._template(attrs, obj, target)

    # -- namespaces ---------------------------------------------------------------------

    def _policy(self, labels: Any) -> tuple[Policy, list[fe.FieldError]]:
        labels = labels if isinstance(labels, dict) else None
        return policy_to_evaluate(labels, self.config.defaults)

    def _namespace(self, attrs: Attributes, obj: Obj, old: Obj | None) -> None:
        """Labels must be valid; an enforce level made stricter warns about the pods."""
        if attrs.subresource:
            return
        labels = sub(obj, "metadata").get("labels") or {}
        policy, errs = self._policy(labels)
        if old is None or attrs.operation == "CREATE":
            if errs:
                raise errors.invalid("Namespace", "", attrs.name, errs)
            if self._exempt_namespace(attrs.namespace):
                self._warn_exempt(attrs, policy, labels)
            return
        old_policy, old_errs = self._policy(sub(old, "metadata").get("labels"))
        if errs and (not old_errs or errs != old_errs):
            raise errors.invalid("Namespace", "", attrs.name, errs)
        new, before = policy.enforce, old_policy.enforce
        if new == before or new.level == PRIVILEGED:
            return
        if new.version == before.version and compare_levels(new.level, before.level) < 1:
            return
        if self._exempt_namespace(attrs.namespace):
            self._warn_exempt(attrs, policy, labels)
            return
        name = str(sub(obj, "metadata").get("name") or attrs.name)
        listed = self._storage.get_list(self._pods.list_prefix(name), ListOptions())
        pods = [stored.object for stored in readable(listed.items)]
        for warning in existing_pod_warnings(name, new, pods, self.config.runtime_classes):
            attrs.warn(warning)

    def _warn_exempt(self, attrs: Attributes, policy: Policy, labels: dict[str, str]) -> None:
        """An exempt namespace labelled with a policy is told the labels do nothing."""
        if policy.fully_privileged() or policy.equivalent(self.config.defaults):
            return
        modes = []
        for mode, level_label, version_label in _MODES:
            lv = getattr(policy, mode)
            if lv.level != PRIVILEGED and (level_label in labels or version_label in labels):
                modes.append(f"{mode}={lv}")
        attrs.warn(
            f"namespace {fe.go_quote(attrs.name)} is exempt from Pod Security, and the policy "
            f"({', '.join(modes)}) will be ignored"
        )

    # -- pods and templates -------------------------------------------------------------

    def _exempt_namespace(self, namespace: str) -> bool:
        return bool(namespace) and namespace in self.config.namespaces

    def _exempt(self, attrs: Attributes) -> bool:
        user = attrs.user.name
        return self._exempt_namespace(attrs.namespace) or (
            bool(user) and user in self.config.usernames
        )

    def _namespace_labels(self, namespace: str) -> Obj | None:
        try:
            stored = self._storage.get(self._namespaces.key("", namespace))
        except StorageError:
            return None
        return sub(stored.object, "metadata", "labels")

    def _pod(self, attrs: Attributes, obj: Obj, old: Obj | None) -> None:
        if attrs.subresource in IGNORED_POD_SUBRESOURCES or self._exempt(attrs):
            return
        labels = self._namespace_labels(attrs.namespace)
        if labels is None:
            raise errors.internal_error(
                f"failed to lookup namespace {fe.go_quote(attrs.namespace)}"
            )
        policy, errs = self._policy(labels)
        if not errs and policy.fully_privileged():
            return
        if attrs.operation == "UPDATE" and old is not None and not significant_update(obj, old):
            return
        self._evaluate(attrs, policy, errs, sub(obj, "metadata"), sub(obj, "spec"), enforce=True)

    def _template(self, attrs: Attributes, obj: Obj, target: tuple[str, str]) -> None:
        """Workloads' pod templates: warnings only (audit is not recorded here)."""
        if self._exempt(attrs):
            return
        labels = self._namespace_labels(attrs.namespace)
        if labels is None:
            return  # kube allows, noting the failed lookup in the audit log
        policy, errs = self._policy(labels)
        if not errs and policy.warn.level == PRIVILEGED and policy.audit.level == PRIVILEGED:
            return
        path = TEMPLATES[target]
        template = sub(obj, *path[:-1]).get(path[-1])
        if template is None and target == ("", "replicationcontrollers"):
            return  # the one optional template: nothing to check
        template = template if isinstance(template, dict) else {}
        self._evaluate(
            attrs, policy, errs, sub(template, "metadata"), sub(template, "spec"), enforce=False
        )

    def _evaluate(
        self,
        attrs: Attributes,
        policy: Policy,
        errs: list[fe.FieldError],
        meta: Obj,
        spec: Obj,
        *,
        enforce: bool,
    ) -> None:
        if exempt_runtime_class(spec, self.config.runtime_classes):
            return
        error = fe.aggregate(errs) if errs else ""
        verdict = evaluate_pod(policy, error, meta, spec, enforce=enforce)
        if verdict.denial:
            rt = attrs.resource
            raise errors.forbidden(rt.plural, rt.group, attrs.name, verdict.denial)
        for warning in verdict.warnings:
            attrs.warn(warning)


def _images(spec: Obj, key: str) -> list[Any]:
    return [c.get("image") if isinstance(c, dict) else None for c in items(spec, key)]


def significant_update(pod: Obj, old: Obj) -> bool:
    """Whether an update can change what the checks see: kube re-checks only changed
    container images and new ephemeral containers (the only mutable spec parts)."""
    spec, old_spec = sub(pod, "spec"), sub(old, "spec")
    for key in ("containers", "initContainers"):
        if _images(spec, key) != _images(old_spec, key):
            return True
    old_ephemeral = {
        str(c.get("name")): c.get("image")
        for c in items(old_spec, "ephemeralContainers")
        if isinstance(c, dict)
    }
    for c in items(spec, "ephemeralContainers"):
        name = str(c.get("name"))
        if name not in old_ephemeral or c.get("image") != old_ephemeral[name]:
            return True
    return False


def build(ctx: PluginContext) -> PodSecurity:
    config = load(ctx.plugin_settings(PodSecurity.name))
    namespaces = ctx.stores[("", "v1", "namespaces")]
    return PodSecurity(config, ctx.storage, namespaces, ctx.stores[("", "v1", "pods")])
