"""certificates.platform.io/v1 CertificateSigningRequests: kube's three strategies.

The main resource takes only metadata changes after the create, which records the
requesting user in the spec; ``/approval`` changes the conditions (Approved, Denied),
``/status`` the rest of the status (the certificate, other conditions).  Who may approve
or sign is admission's business (admission/certificates), not the strategies'.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from types import MappingProxyType

from platform_api.fieldselectors import FieldGetter
from platform_api.registry import requester
from platform_api.registry.certificates_validation import (
    APPROVED,
    DENIED,
    Options,
    preserve_conditions,
    stamp_conditions,
    update_options,
    validate_csr,
    validate_csr_update,
)
from platform_api.registry.strategy import GenericStrategy, Obj, StatusStrategy, Strategy, register
from platform_api.timestamps import format_time
from platform_api.validation.field import FieldError

GROUP = "certificates.platform.io"


def _now() -> str:
    return format_time(datetime.now(UTC))


@register(GROUP, "CertificateSigningRequest")
class CertificateSigningRequestStrategy(GenericStrategy):
    # kube's GetResetFields of the main, /status and /approval strategies, beyond what
    # every kind's main and /status writes reset: the spec is the requester's alone
    reset_fields = MappingProxyType(
        {
            "": ("spec",),
            "status": ("spec", "status.conditions"),
            "approval": ("spec", "status.certificate"),
        }
    )

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        spec = obj.setdefault("spec", {})
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
        user = requester.current()
        if user is not None:
            spec["username"] = user.name
            if user.uid:
                spec["uid"] = user.uid
            if user.groups:
                spec["groups"] = list(user.groups)
            if user.extra:
                spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        obj["status"] = {}  # never pre-approved

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        for key in ("spec", "status"):
            if key in old:
                new[key] = copy.deepcopy(old[key])
            else:
                new.pop(key, None)

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_csr(obj, Options())

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.update_errors(new, old, update_options(new, old))

    def update_errors(self, new: Obj, old: Obj, opts: Options) -> list[FieldError]:
        """kube's validateCertificateSigningRequestUpdate, for every path a CSR is
        written through: the metadata as a create's and the request's rules, what no
        update may do, then the metadata as an update's."""
        errs = super().validate(new) + validate_csr_update(new, old, opts)
        return errs + self.validate_meta_update(new, old, "U")

    def field_getters(self) -> dict[str, FieldGetter]:
        getters = super().field_getters()
        getters["spec.signerName"] = lambda obj: str((obj.get("spec") or {}).get("signerName", ""))
        return getters

    def subresource_strategies(self) -> dict[str, Strategy]:
        return {"status": CSRStatusStrategy(self), "approval": CSRApprovalStrategy(self)}


class CSRStatusStrategy(StatusStrategy):
    """``/status``: the certificate and conditions other than Approved and Denied."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        preserve_conditions(new, old, APPROVED)
        preserve_conditions(new, old, DENIED)
        stamp_conditions(new, old, _now())

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return _main(self).update_errors(new, old, update_options(new, old, set_certificate=True))


class CSRApprovalStrategy(StatusStrategy):
    """``/approval``: only the conditions change (metadata changes stick, as in kube)."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        stamp_conditions(new, old, _now())
        wanted = (new.get("status") or {}).get("conditions")
        super().prepare_for_update(new, old)
        status = copy.deepcopy(old.get("status") or {})
        if wanted:
            status["conditions"] = wanted
        else:
            status.pop("conditions", None)
        new["status"] = status

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return _main(self).update_errors(new, old, update_options(new, old, set_approval=True))


def _main(sub: StatusStrategy) -> CertificateSigningRequestStrategy:
    assert isinstance(sub.main, CertificateSigningRequestStrategy)
    return sub.main
