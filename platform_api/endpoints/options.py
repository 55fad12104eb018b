"""Query-parameter options: those of the write verbs (CreateOptions, UpdateOptions,
PatchOptions), and the ``export`` a get refuses.

Validated as kube does: an invalid option is a 422 on the options kind itself
(``CreateOptions.meta.platform.io "" is invalid: dryRun: Unsupported value: ...``).
"""

from __future__ import annotations

from dataclasses import dataclass

from twisted.web.server import Request

from platform_api import errors
from platform_api.apiserver.requestinfo import query_flag
from platform_api.validation import field
from platform_api.validation.field import FieldError

META_GROUP = "meta.platform.io"
FIELD_MANAGER_MAX = 128
VALIDATION_LEVELS = ("", "Ignore", "Strict", "Warn")


def arg(request: Request, name: bytes) -> str | None:
    values = request.args.get(name)
    return values[0].decode("utf-8", "replace") if values else None


def args(request: Request, name: bytes) -> list[str]:
    return [v.decode("utf-8", "replace") for v in request.args.get(name, [])]


def refuse_export(request: Request) -> None:
    """kube's plain GET of an object (its Getter, not a GetterWithOptions such as a
    pod's log) refuses ``?export``, unless it reads as false: only ``0`` and ``false``
    do, any other value (an empty one too) is true, as Go's query conversion reads it."""
    values = request.args.get(b"export")
    if values and query_flag(values[0]):
        raise errors.bad_request(
            "the export parameter, deprecated since v1.14, is no longer supported"
        )


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool
    field_manager: str
    field_validation: str  # Ignore, Warn or Strict
    force: bool = False


def default_field_manager(request: Request) -> str:
    """kube infers a manager from the User-Agent: the printable part before the first
    '/', or ``unknown`` when that is empty (no User-Agent, say)."""
    agent = (request.getHeader(b"user-agent") or b"").decode("utf-8", "replace")
    prefix = agent.split("/", 1)[0]
    if not prefix.isprintable():  # rare: the per-character filter stays off the hot path
        prefix = "".join(c for c in prefix if c.isprintable())
    return prefix[:FIELD_MANAGER_MAX] or "unknown"


def validate_dry_run(values: list[str]) -> list[FieldError]:
    """kube's ValidateDryRun: every value "All"; a bare ``?dryRun`` is a value "", refused."""
    if any(v != "All" for v in values):
        return [field.not_supported("dryRun", values, ["All"])]
    return []


def _validate_field_manager(manager: str) -> list[FieldError]:
    errs = []
    if len(manager) > FIELD_MANAGER_MAX:
        errs.append(field.too_long("fieldManager", FIELD_MANAGER_MAX))
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            code = f"U+{ord(ch):04X}"  # Go's %#U: no glyph for an unprintable rune
            errs.append(
                field.invalid(
                    "fieldManager", manager, f"invalid character {code} (at position {i})"
                )
            )
    return errs


def write_options(request: Request, kind: str, patch_type: str = "") -> WriteOptions:
    """Parse and validate the options of a create (``kind`` CreateOptions), update or patch."""
    dry_run = args(request, b"dryRun")
    manager = arg(request, b"fieldManager") or ""
    level = arg(request, b"fieldValidation") or ""
    force_arg = arg(request, b"force")
    errs: list[FieldError] = []
    if kind == "PatchOptions":
        if patch_type in ("application/apply-patch+yaml", "application/apply-patch+cbor"):
            if not manager:
                errs.append(field.required("fieldManager", "is required for apply patch"))
        elif force_arg is not None:
            errs.append(field.forbidden("force", "may not be specified for non-apply patch"))
    errs += _validate_field_manager(manager)
    errs += validate_dry_run(dry_run)
    if level not in VALIDATION_LEVELS:
        errs.append(field.not_supported("fieldValidation", level, list(VALIDATION_LEVELS)))
    if errs:
        raise errors.invalid(kind, META_GROUP, "", errs)
    return WriteOptions(
        dry_run="All" in dry_run,
        field_manager=manager or default_field_manager(request),
        field_validation=level or "Warn",
        force=force_arg is not None and query_flag(force_arg),
    )
