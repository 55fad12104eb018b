"""kube's rules for the annotations a pod or pod template carries.

The deprecated seccomp and AppArmor annotations name profiles that must read as such
(and match the fields that replaced them), an AppArmor annotation names a container of
the pod, and may be neither added, changed nor removed once the pod exists; a mirror pod
is bound to its node; the pod deletion cost is a 32-bit integer; the legacy tolerations
annotation is a JSON list of tolerations.  kube checks these beside the spec
(``ValidatePodSpecificAnnotations`` and its update and field-matching rules), and on
create copies an AppArmor annotation into the container's field
(``applyAppArmorVersionSkew``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from platform_api.codec import BodyError, parse_json
from platform_api.gotext import json_kind
from platform_api.registry.pvsources import descending_path
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.tolerations import validate_tolerations

Obj = dict[str, Any]

# a static pod's mirror: the node authorizer and admission read it too
MIRROR_ANNOTATION = "platform.io/config.mirror"
MIRROR = MIRROR_ANNOTATION
# the key this server's ReplicaSet controller reads, as the stock tools write it
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
TOLERATIONS = "scheduler.alpha.platform.io/tolerations"
SECCOMP_POD = "seccomp.security.alpha.platform.io/pod"
SECCOMP_CONTAINER = "container.seccomp.security.alpha.platform.io/"
APPARMOR_CONTAINER = "container.apparmor.security.beta.platform.io/"
_LOCALHOST = "localhost/"
_MAX_LOCALHOST_PROFILE = 4095  # PATH_MAX - 1


def deletion_cost(annotations: Obj) -> int | None:
    """GetDeletionCostFromPodAnnotations: 0 when absent, None when it does not read (a
    sign other than ``-``, leading zeros, past int32)."""
    value = annotations.get(DELETION_COST)
    if value is None:
        return 0
    text = str(value)
    if not text or not (text[0] == "-" or text == "0" or "1" <= text[0] <= "9"):
        return None
    try:
        cost = int(text, 10)
    except ValueError:
        return None
    return cost if -(2**31) <= cost < 2**31 and text.lstrip("-").isdigit() else None


def annotation_errors(
    annotations: Obj, spec: Obj, path: str, allow_invalid_cost: bool = False
) -> list[FieldError]:
    """ValidatePodSpecificAnnotations; ``path`` is where the annotations are."""
    errs: list[FieldError] = []
    if MIRROR in annotations and not spec.get("nodeName"):
        detail = "must set spec.nodeName if mirror pod annotation is set"
        errs.append(field.invalid(f"{path}[{MIRROR}]", annotations[MIRROR], detail))
    if annotations.get(TOLERATIONS):
        errs += _tolerations(str(annotations[TOLERATIONS]), path)
    if not allow_invalid_cost and deletion_cost(annotations) is None:
        detail = "must be a 32bit integer"
        errs.append(field.invalid(f"{path}[{DELETION_COST}]", annotations[DELETION_COST], detail))
    if SECCOMP_POD in annotations:
        errs += _seccomp_profile(str(annotations[SECCOMP_POD]), f"{path}.{SECCOMP_POD}")
    for key in sorted(annotations):
        if key.startswith(SECCOMP_CONTAINER):
            errs += _seccomp_profile(str(annotations[key]), f"{path}.{key}")
    names = {container.get("name") for container, _ in containers(spec, "spec")}
    for key in sorted(annotations):
        if not key.startswith(APPARMOR_CONTAINER):
            continue
        name, profile = key.removeprefix(APPARMOR_CONTAINER), str(annotations[key])
        if name not in names:
            errs.append(field.invalid(f"{path}[{key}]", name, "container not found"))
        if profile not in ("", "runtime/default", "unconfined") and not profile.startswith(
            _LOCALHOST
        ):
            detail = f'invalid AppArmor profile name: "{profile}"'
            errs.append(field.invalid(f"{path}[{key}]", profile, detail))
    return errs


def annotation_update_errors(new: Obj, old: Obj, path: str) -> list[FieldError]:
    """ValidatePodSpecificAnnotationUpdates: AppArmor annotations and the mirror
    annotation stay as they were; then the annotations' own rules (kube runs them twice on
    a spec update, so their causes repeat)."""
    errs: list[FieldError] = []
    before = old["metadata"].get("annotations") or {}
    after = new["metadata"].get("annotations") or {}
    for key, value in before.items():
        if key in after and after[key] == value:
            continue
        if key.startswith(APPARMOR_CONTAINER):
            detail = "may not remove or update AppArmor annotations"
            errs.append(field.forbidden(f"{path}[{key}]", detail))
        if key == MIRROR:
            errs.append(
                field.forbidden(f"{path}[{key}]", "may not remove or update mirror pod annotation")
            )
    for key in after:
        if key in before:
            continue
        if key.startswith(APPARMOR_CONTAINER):
            errs.append(field.forbidden(f"{path}[{key}]", "may not add AppArmor annotations"))
        if key == MIRROR:
            errs.append(field.forbidden(f"{path}[{key}]", "may not add mirror pod annotation"))
    allow = deletion_cost(before) is None
    return errs + annotation_errors(after, new.get("spec") or {}, path, allow)


def containers(spec: Obj, at: str) -> Iterator[tuple[Obj, str]]:
    """VisitContainersWithPath: init containers, containers, ephemeral containers."""
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for i, container in enumerate(spec.get(kind) or []):
            yield container or {}, f"{at}.{kind}[{i}]"


def field_match_errors(annotations: Obj, spec: Obj, at: str) -> list[FieldError]:
    """validateSeccompAnnotationsAndFields and validateAppArmorAnnotationsAndFieldsMatch-
    OnCreate: where both a deprecated annotation and its field say something, they agree."""
    errs: list[FieldError] = []
    pod_context = spec.get("securityContext") or {}
    if pod_context.get("seccompProfile") and SECCOMP_POD in annotations:
        where = f"{at}.securityContext.seccompProfile"
        errs += _seccomp_match(str(annotations[SECCOMP_POD]), pod_context["seccompProfile"], where)
    for container, where in containers(spec, at):
        profile = (container.get("securityContext") or {}).get("seccompProfile")
        key = SECCOMP_CONTAINER + str(container.get("name") or "")
        if profile and key in annotations:
            errs += _seccomp_match(
                str(annotations[key]), profile, f"{where}.securityContext.seccompProfile"
            )
    if (spec.get("os") or {}).get("name") == "windows":
        return errs
    for container, where in containers(spec, at):
        profile = (container.get("securityContext") or {}).get("appArmorProfile") or (
            pod_context.get("appArmorProfile")
        )
        key = APPARMOR_CONTAINER + str(container.get("name") or "")
        if profile and key in annotations:
            errs += _apparmor_match(
                str(annotations[key]), profile, f"{where}.securityContext.appArmorProfile"
            )
    return errs


def apparmor_field(annotation: str, checked: bool = True) -> Obj | None:
    """ApparmorFieldForAnnotation: the profile field an annotation value stands for;
    ``checked``, only where that field is valid (the version skew copies no other)."""
    if annotation == "runtime/default":
        return {"type": "RuntimeDefault"}
    if annotation == "unconfined":
        return {"type": "Unconfined"}
    if annotation.startswith(_LOCALHOST):
        profile = annotation.removeprefix(_LOCALHOST)
        bad = profile.strip() != profile or not profile or len(profile) > _MAX_LOCALHOST_PROFILE
        return None if checked and bad else {"type": "Localhost", "localhostProfile": profile}
    return None


def sync_apparmor(pod: Obj) -> list[str]:
    """applyAppArmorVersionSkew: a container with an AppArmor annotation and no profile
    of its own gets the annotation's as its field, unless the pod's says the same; the
    deprecation warnings it sends, for each annotation copied or no field can be made of."""
    spec = pod.get("spec") or {}
    if (spec.get("os") or {}).get("name") == "windows":
        return []
    annotations = pod["metadata"].get("annotations") or {}
    pod_profile = (spec.get("securityContext") or {}).get("appArmorProfile")
    warnings = []
    for container, _ in containers(spec, "spec"):
        key = APPARMOR_CONTAINER + str(container.get("name") or "")
        context = container.get("securityContext") or {}
        if key not in annotations or context.get("appArmorProfile"):
            continue
        profile = apparmor_field(str(annotations[key]))
        if profile is not None and profile != pod_profile:
            container.setdefault("securityContext", {})["appArmorProfile"] = profile
        if profile is None or profile != pod_profile:
            warnings.append(
                f"metadata.annotations[{key}]: deprecated since v1.30; use the "
                '"appArmorProfile" field instead'
            )
    return warnings


def _seccomp_profile(profile: str, at: str) -> list[FieldError]:
    """ValidateSeccompProfile of an annotation's value."""
    if profile in ("runtime/default", "docker/default", "unconfined"):
        return []
    if profile.startswith(_LOCALHOST):
        return descending_path(profile.removeprefix(_LOCALHOST), at)
    return [field.invalid(at, profile, "must be a valid seccomp profile")]


def _seccomp_match(annotation: str, profile: Obj, at: str) -> list[FieldError]:
    kind = profile.get("type")
    if kind == "Unconfined" and annotation != "unconfined":
        return [field.forbidden(f"{at}.type", "seccomp type in annotation and field must match")]
    if kind == "RuntimeDefault" and annotation not in ("runtime/default", "docker/default"):
        return [field.forbidden(f"{at}.type", "seccomp type in annotation and field must match")]
    if kind == "Localhost":
        if not annotation.startswith(_LOCALHOST):
            detail = "seccomp type in annotation and field must match"
            return [field.forbidden(f"{at}.type", detail)]
        if annotation.removeprefix(_LOCALHOST) != profile.get("localhostProfile"):
            detail = "seccomp profile in annotation and field must match"
            return [field.forbidden(f"{at}.localhostProfile", detail)]
    return []


def _apparmor_match(annotation: str, profile: Obj, at: str) -> list[FieldError]:
    kind = profile.get("type")
    mismatch = [field.forbidden(f"{at}.type", "apparmor type in annotation and field must match")]
    if kind == "Unconfined" and annotation != "unconfined":
        return mismatch
    if kind == "RuntimeDefault" and annotation != "runtime/default":
        return mismatch
    if kind == "Localhost":
        if not annotation.startswith(_LOCALHOST):
            return mismatch
        if annotation.removeprefix(_LOCALHOST) != profile.get("localhostProfile"):
            detail = "apparmor profile in annotation and field must match"
            return [field.forbidden(f"{at}.localhostProfile", detail)]
    return []


def _tolerations(text: str, path: str) -> list[FieldError]:
    """ValidateTolerationsInPodAnnotations: the annotation read as JSON ``[]Toleration``
    (a problem reading it is named by the annotation's key), then the tolerations' rules."""
    try:
        value, _ = parse_json(text.encode())
    except BodyError as e:
        return [field.invalid(path, TOLERATIONS, str(e))]
    if value is None:
        return []
    if not isinstance(value, list):
        problem = (
            f"json: cannot unmarshal {json_kind(value)} into Go value of type []core.Toleration"
        )
        return [field.invalid(path, TOLERATIONS, problem)]
    for i, item in enumerate(value):  # kube decodes into its internal type
        if item is not None and not isinstance(item, dict):
            problem = f"json: cannot unmarshal {json_kind(item)} into .{i} of type core.Toleration"
            return [field.invalid(path, TOLERATIONS, problem)]
    tolerations = [item or {} for item in value]
    return validate_tolerations(tolerations, f"{path}.{TOLERATIONS}")
