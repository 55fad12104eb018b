"""Device selectors of dynamic resource allocation: CEL expressions over one ``device``.

kube compiles each selector of a DeviceClass, ResourceClaim or ResourceClaimTemplate
with its DRA compiler (``k8s.io/dynamic-resource-allocation/cel``) and refuses the write
when it does not compile, does not yield a bool, or may cost more than its limit.
"""

from __future__ import annotations

from platform_api.cel.devices import compile_selector
from platform_api.validation import field
from platform_api.validation.field import FieldError

# kube's resource.CELSelectorExpressionMaxLength and ...MaxCost.
MAX_LENGTH = 10 * 1024
MAX_COST = 1_000_000


def validate_device_selector(expression: str, path: str, stored: bool) -> list[FieldError]:
    """kube's validateCELSelector: ``path`` is the selector's ``cel`` field; ``stored``
    when the expression is unchanged from the stored object (kube then compiles it in
    its environment for stored expressions, which in v1.36 declares nothing more for
    selectors than the one for new ones: both compile alike here)."""
    at = f"{path}.expression"
    if len(expression) > MAX_LENGTH:
        return [field.too_long(at, MAX_LENGTH)]  # not compiled
    compiled = compile_selector(expression)
    if compiled.error:
        return [field.invalid(at, expression, compiled.error)]
    if compiled.max_cost > MAX_COST:
        return [field.forbidden(at, "too complex, exceeds cost limit")]
    return []
