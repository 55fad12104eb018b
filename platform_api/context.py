"""The per-request state every layer below the filters reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from platform_api.authentication.user import UserInfo


@dataclass
class Context:
    """What a handler passes down: who asks, and what the response should carry."""

    user: UserInfo
    namespace: str = ""
    dry_run: bool = False
    field_manager: str = ""
    # Warning header texts, in order; each becomes one ``Warning: 299 - "..."`` header.
    warnings: list[str] = field(default_factory=list)
    # The upstream group name objects go out with (the request named it, in its path or
    # its body's apiVersion); empty: the branded names.
    render_group: str = ""
    # Annotations for the request's audit event (kube's audit.AddAuditAnnotation): set by
    # authorization, admission plugins, webhooks and policies; the first value of a key wins.
    audit_annotations: dict[str, str] = field(default_factory=dict)

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def annotate(self, key: str, value: str) -> None:
        self.audit_annotations.setdefault(key, value)
