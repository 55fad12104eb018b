"""The DaemonSet strategy's template generation (the annotation v1 carries it in)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.strategy import StatusStrategy, strategy_for
from platform_api.scheme.catalog import builtin_scheme

ANNOTATION = "deprecated.daemonset.template.generation"
RT = builtin_scheme().lookup("apps", "v1", "daemonsets")
assert RT is not None
MAIN: Any = strategy_for(RT)
STATUS: Any = StatusStrategy(MAIN)


def _ds(generation: str | None, label: str = "b") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "d", "namespace": "ns"}
    if generation is not None:
        meta["annotations"] = {ANNOTATION: generation}
    template = {"metadata": {"labels": {"a": label}}}
    return {"metadata": meta, "spec": {"template": template}, "status": {}}


@pytest.mark.parametrize(("given", "kept"), [(None, "1"), ("0", "1"), ("-4", "1"), ("+7", "7")])
def test_a_create_keeps_a_positive_generation(given: str | None, kept: str) -> None:
    obj = _ds(given)
    MAIN.prepare_for_create(obj)
    assert obj["metadata"]["annotations"][ANNOTATION] == kept


def test_updates_keep_the_stored_generation() -> None:
    old = _ds("3")
    new = _ds("9")
    MAIN.prepare_for_update(new, old)
    assert new["metadata"]["annotations"][ANNOTATION] == "3"
    new = _ds(None, label="c")  # the template changed
    MAIN.prepare_for_update(new, old)
    assert new["metadata"]["annotations"][ANNOTATION] == "4"
    new = _ds(None)
    STATUS.prepare_for_update(new, copy.deepcopy(old))
    assert new["metadata"]["annotations"][ANNOTATION] == "3"


def test_a_generation_that_does_not_parse_is_a_decoding_failure() -> None:
    with pytest.raises(errors.StatusError) as raised:
        MAIN.prepare_for_update(_ds("1e3"), _ds("1"))
    assert (raised.value.code, raised.value.message) == (
        400,
        'DaemonSet in version "v1" cannot be handled as a DaemonSet: '
        'strconv.ParseInt: parsing "1e3": invalid syntax',
    )
