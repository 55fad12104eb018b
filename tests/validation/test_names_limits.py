"""Size limits of names, label keys and finalizers, worded as kube 1.36 words them."""

from __future__ import annotations

from platform_api.validation.names import is_dns1123_subdomain, is_qualified_name
from platform_api.validation.objectmeta import validate_kube_finalizers


def test_a_label_key_prefix_counts_bytes_a_name_characters() -> None:
    assert is_qualified_name("a" * 254 + "/k") == ["prefix part must be no more than 253 bytes"]
    assert is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert is_qualified_name("k" * 64) == ["name part must be no more than 63 bytes"]


def test_built_in_kinds_want_qualified_or_standard_finalizers() -> None:
    errs = validate_kube_finalizers(
        ["kubernetes", "orphan", "a/b", "custom"], "metadata.finalizers"
    )
    assert [(e.field, e.detail) for e in errs] == [
        (
            "metadata.finalizers[3]",
            "name is neither a standard finalizer name nor is it fully qualified",
        )
    ]
