"""What a Pod Security check is, and the helpers every check's message uses.

A check looks at a pod's metadata and spec (decoded JSON, as stored) and says whether
the pod is allowed and, if not, a short reason ("host namespaces") and a detail
("hostNetwork=true").  Each check has one or more revisions, each from a policy version
on; a restricted revision may stand in for ("override") a baseline check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class CheckResult:
    allowed: bool
    reason: str = ""
    detail: str = ""


ALLOWED = CheckResult(True)
CheckFn = Callable[[Obj, Obj], CheckResult]  # (pod metadata, pod spec)


def forbid(reason: str, detail: str = "") -> CheckResult:
    return CheckResult(False, reason, detail)


@dataclass(frozen=True)
class VersionedCheck:
    """One revision of a check: from policy version ``v1.<minimum>`` on."""

    minimum: int
    check: CheckFn
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    id: str
    level: str
    versions: tuple[VersionedCheck, ...]


@dataclass(frozen=True)
class Aggregate:
    """Every forbidding check's reason and detail, in check order."""

    reasons: tuple[str, ...] = ()
    details: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return not self.reasons

    def forbidden_reason(self) -> str:
        """``host ports, privileged``: how one pod among many is summed up."""
        return ", ".join(self.reasons)

    def forbidden_detail(self) -> str:
        """``host namespaces (hostNetwork=true), privileged (...)``: the one-pod message."""
        return ", ".join(
            f"{reason} ({detail})" if detail else reason
            for reason, detail in zip(self.reasons, self.details, strict=True)
        )


def aggregate(results: list[CheckResult]) -> Aggregate:
    forbidden = [r for r in results if not r.allowed]
    return Aggregate(
        tuple(r.reason or "unknown forbidden reason" for r in forbidden),
        tuple(r.detail for r in forbidden),
    )


# -- helpers for the checks' messages and fields -----------------------------------------


def items(parent: Obj | None, key: str) -> list[Any]:
    """A list field, [] when missing or null."""
    value = (parent or {}).get(key)
    return value if isinstance(value, list) else []


def sub(parent: Obj | None, *path: str) -> Obj:
    """A nested object field, {} when missing or null."""
    out = parent or {}
    for key in path:
        value = out.get(key)
        out = value if isinstance(value, dict) else {}
    return out


def has(parent: Obj | None, key: str) -> bool:
    """Whether a pointer field is set (present and not null)."""
    return (parent or {}).get(key) is not None


def containers(spec: Obj) -> Iterator[Obj]:
    """Init containers, containers, then ephemeral containers, as kube visits them."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in items(spec, key):
            if isinstance(container, dict):
                yield container


def name_of(container: Obj) -> str:
    return str(container.get("name") or "")


def security_context(container_or_spec: Obj) -> Obj:
    return sub(container_or_spec, "securityContext")


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def join_quote(values: list[str]) -> str:
    """``"a", "b"``: quoted without escaping, as kube's joinQuote."""
    return '"' + '", "'.join(values) + '"' if values else ""


def containers_phrase(names: list[str]) -> str:
    """``container "a"`` or ``containers "a", "b"``."""
    return f"{pluralize('container', 'containers', len(names))} {join_quote(names)}"


def is_windows(spec: Obj) -> bool:
    return sub(spec, "os").get("name") == "windows"


def in_user_namespace(spec: Obj) -> bool:
    """``hostUsers: false``: some restrictions are relaxed for such pods."""
    return spec.get("hostUsers") is False


def unless_windows(check: CheckFn) -> CheckFn:
    """The v1.25 revisions: Linux-only checks allow pods that declare Windows."""

    def windows_aware(meta: Obj, spec: Obj) -> CheckResult:
        return ALLOWED if is_windows(spec) else check(meta, spec)

    return windows_aware


def unless_user_namespace(check: CheckFn) -> CheckFn:
    """The v1.35 revisions: pods in a user namespace are allowed."""

    def relaxed(meta: Obj, spec: Obj) -> CheckResult:
        return ALLOWED if in_user_namespace(spec) else check(meta, spec)

    return relaxed
