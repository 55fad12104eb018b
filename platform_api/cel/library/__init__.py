"""kube's CEL libraries, one module each, and the set the base environment of v1.36 holds.

From cel-cpp: the standard library, optional types, cel-go's lists extension (version 3 in
kube; cel-cpp's version 2 holds the same functions), sets and two-variable comprehensions.
Implemented here: kube's own libraries and cel-go's strings extension (version 2).  kube 1.36's
base environment has neither the math nor the encoders extension, so neither is enabled.
"""

from __future__ import annotations

from platform_api.cel.library import (
    authz,
    dynselect,
    format,
    ip,
    lists,
    listtypes,
    quantity,
    regex,
    semver,
    standard,
    strings,
    urls,
)
from platform_api.cel.library.decl import Function, merge

# (name, version) of cel-cpp extensions; version None is the latest.
EXTENSIONS: list[tuple[str, int | None]] = [
    ("optional", None),
    ("lists", 2),
    ("sets", None),
    ("two-var-comprehensions", None),
]

BASE: list[Function] = merge(
    standard.ORDERING,
    [standard.STRING],
    strings.FUNCTIONS,
    lists.FUNCTIONS,
    regex.FUNCTIONS,
    urls.FUNCTIONS,
    authz.FUNCTIONS,
    authz.SELECTOR_FUNCTIONS,
    quantity.FUNCTIONS,
    ip.IP_FUNCTIONS,
    ip.CIDR_FUNCTIONS,
    format.FUNCTIONS,
    semver.FUNCTIONS,
)

# Functions only the runtime knows (targets of checked-AST rewrites, and the helper of
# two-variable comprehensions that cel-expr-python declares but does not bind).
RUNTIME_ONLY: list[Function] = [
    *format.RUNTIME,
    *standard.RUNTIME,
    *listtypes.FUNCTIONS,
    *dynselect.FUNCTIONS,
]

REDECLARED_STANDARD = standard.REDECLARED

__all__ = ["BASE", "EXTENSIONS", "REDECLARED_STANDARD", "RUNTIME_ONLY", "Function"]
