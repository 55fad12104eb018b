"""Who is making a request: kube's ``user.Info``."""

from __future__ import annotations

from dataclasses import dataclass, field

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def with_group(self, group: str) -> UserInfo:
        if group in self.groups:
            return self
        return UserInfo(self.name, self.uid, (*self.groups, group), self.extra)

    def to_review(self) -> dict[str, object]:
        """The ``UserInfo`` shape of TokenReview and SelfSubjectReview statuses."""
        out: dict[str, object] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(UNAUTHENTICATED,))
