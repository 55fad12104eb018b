"""Go's ``$`` ends the text; Python's also matches before a final newline. Every name,
key and format rule refuses a value ending in one, as kube-apiserver v1.36 did when
sent ``abc\\n`` as a ConfigMap name, a label key and value, a data key and a port name."""

from __future__ import annotations

import pytest

from platform_api.cel.library.format import _BASE64, _TIME, _UUID
from platform_api.cel.validators import valid_timestamp
from platform_api.registry.servicespec import port_name_errors
from platform_api.validation import names

# Every is_* rule of names.py but path segments and their prefixes (kube forbids only
# '/', '%', '.' and '..').
CHECKS = [
    check
    for name, check in vars(names).items()
    if name.startswith("is_") and not name.startswith("is_path_segment_")
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_names_and_keys_refuse_a_trailing_newline(check: object) -> None:
    assert check("abc") == []  # type: ignore[operator]
    assert check("abc\n") != []  # type: ignore[operator]


def test_formats_refuse_a_trailing_newline() -> None:
    assert port_name_errors("http\n") != []
    assert not _UUID.match("123e4567-e89b-12d3-a456-426614174000\n")
    assert not _BASE64.match("YWJj\n")
    assert not _TIME.match("12:00:00Z\n")
    assert valid_timestamp("2024-01-01T00:00:00Z")
    assert not valid_timestamp("2024-01-01T00:00:00Z\n")
