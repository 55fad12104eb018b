"""CSIDriver (storage.platform.io): kube's SetDefaults_CSIDriver, ValidateCSIDriver and
ValidateCSIDriverUpdate (with the feature gates of v1.36's defaults: SELinux mount on,
volume limit scaling off).

``attachRequired`` and ``volumeLifecycleModes`` never change; note that kube names the
first ``spec.attachedRequired`` in its messages, and so does this server.
"""

from __future__ import annotations

from platform_api.registry.csinode import GROUP
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import validate_core_meta_update

FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES = ["Persistent", "Ephemeral"]
MIN_TOKEN_SECONDS, MAX_TOKEN_SECONDS = 600, 1 << 32
_ATTACH = "spec.attachedRequired"  # sic: kube's path
TOKENS_IN_SECRETS_UNSET = (
    "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to "
    "true to prevent possible logging of tokens in volume attributes"
)


@defaults(GROUP, "CSIDriver")
def _csidriver(obj: Obj) -> None:
    spec = obj.get("spec")
    spec = obj["spec"] = spec if isinstance(spec, dict) else {}  # a struct: always there
    for key, value in (("attachRequired", True), ("podInfoOnMount", False)):
        if spec.get(key) is None:
            spec[key] = value
    if spec.get("storageCapacity") is None:
        spec["storageCapacity"] = False
    if spec.get("fsGroupPolicy") is None:
        spec["fsGroupPolicy"] = "ReadWriteOnceWithFSType"
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    for key in ("requiresRepublish", "seLinuxMount"):
        if spec.get(key) is None:
            spec[key] = False


def _token_errors(requests: list[Obj]) -> list[FieldError]:
    errs: list[FieldError] = []
    audiences: set[str] = set()
    for i, request in enumerate(requests):
        path, audience = f"spec.tokenRequests[{i}]", request.get("audience", "")
        if audience in audiences:
            errs.append(field.duplicate(f"{path}.audience", audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if not isinstance(seconds, int):
            continue
        if seconds < MIN_TOKEN_SECONDS:
            detail = "may not specify a duration less than 10 minutes"
            errs.append(field.invalid(f"{path}.expirationSeconds", seconds, detail))
        if seconds > MAX_TOKEN_SECONDS:
            detail = "may not specify a duration larger than 2^32 seconds"
            errs.append(field.invalid(f"{path}.expirationSeconds", seconds, detail))
    return errs


def validate_csidriver_spec(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, path in (
        ("attachRequired", _ATTACH),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
    ):
        if spec.get(key) is None:
            errs.append(field.required(path))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(field.not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    requests = spec.get("tokenRequests") or []
    errs += _token_errors(requests)
    for mode in spec.get("volumeLifecycleModes") or []:
        if mode not in LIFECYCLE_MODES:
            errs.append(field.not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES))
    if spec.get("seLinuxMount") is None:
        errs.append(field.required("spec.seLinuxMount"))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and period < 10:
        detail = "must be greater than or equal to 10 seconds"
        errs.append(field.invalid("spec.nodeAllocatableUpdatePeriodSeconds", period, detail))
    in_secrets = spec.get("serviceAccountTokenInSecrets")
    if in_secrets is not None and not requests:
        detail = "serviceAccountTokenInSecrets is set but no tokenRequests are specified"
        errs.append(field.invalid("spec.serviceAccountTokenInSecrets", in_secrets, detail))
    return errs


@register(GROUP, "CSIDriver")
class CSIDriverStrategy(GenericStrategy):
    allow_unconditional_update = False  # a PUT names the resourceVersion it replaces
    returns_deleted_object = True  # as kube's store for the kind answers a delete

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """kube's strategy counts spec changes from zero: a new driver has none."""
        super().prepare_for_update(new, old)
        if new.get("spec") != old.get("spec"):
            new["metadata"]["generation"] = (old["metadata"].get("generation") or 0) + 1

    def validate(self, obj: Obj) -> list[FieldError]:
        return super().validate(obj) + validate_csidriver_spec(obj.get("spec") or {})

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        """kube's WarningsOnCreate (updates get none)."""
        spec = obj.get("spec") or {}
        if (
            old is None
            and spec.get("tokenRequests")
            and spec.get("serviceAccountTokenInSecrets") is None
        ):
            return [TOKENS_IN_SECRETS_UNSET]
        return []

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        spec, before = new.get("spec") or {}, old.get("spec") or {}
        errs = validate_core_meta_update(new["metadata"], old["metadata"])
        errs += validate_csidriver_spec(spec)
        if spec.get("attachRequired") != before.get("attachRequired"):
            errs.append(field.invalid(_ATTACH, spec.get("attachRequired"), "field is immutable"))
        modes = spec.get("volumeLifecycleModes")
        if modes != before.get("volumeLifecycleModes"):
            errs.append(field.invalid("spec.volumeLifecycleModes", modes, "field is immutable"))
        return errs
