"""Property tests of server-side apply and Update ownership on a Deployment, the kind
whose schema has every list type (keyed by one and two fields, sets, atomic, plain):
any configuration that fits the schema applies or conflicts (a 409 Status), nothing else,
and what each manager owns stays within the object."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from platform_api.codec.goshape import shape
from platform_api.errors import StatusError
from platform_api.fieldmanager.fieldpath import from_fields_v1
from platform_api.fieldmanager.manager import FieldManager, Who
from platform_api.fieldmanager.typed import Typed
from platform_api.scheme.schemas import load_schemas

SCHEMAS = load_schemas()
MANAGER = FieldManager(
    Typed(SCHEMAS), SCHEMAS.get(SCHEMAS.for_kind("apps", "v1", "Deployment")), True
)
NOW = "2026-12-04T00:00:00Z"
Obj = dict[str, Any]

_NAMES = st.sampled_from(["a", "b", "c"])
_PORTS = st.lists(
    st.fixed_dictionaries(
        {"containerPort": st.sampled_from([80, 443])},
        optional={"protocol": st.sampled_from(["TCP", "UDP"]), "name": _NAMES},
    ),
    max_size=3,
)
_ENV = st.lists(
    st.fixed_dictionaries({"name": _NAMES}, optional={"value": st.text(max_size=3)}),
    max_size=3,
)
_CONTAINER = st.fixed_dictionaries(
    {"name": _NAMES},
    optional={
        "image": st.sampled_from(["x", "y"]),
        "ports": _PORTS,
        "env": _ENV,
        "args": st.lists(st.text(max_size=2), max_size=2),
    },
)
_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(0, 3),
        "selector": st.fixed_dictionaries({"matchLabels": st.dictionaries(_NAMES, _NAMES)}),
        "template": st.fixed_dictionaries(
            {},
            optional={
                "metadata": st.fixed_dictionaries(
                    {}, optional={"labels": st.dictionaries(_NAMES, _NAMES, max_size=2)}
                ),
                "spec": st.fixed_dictionaries(
                    {},
                    optional={
                        "containers": st.lists(_CONTAINER, max_size=3),
                        "tolerations": st.lists(
                            st.fixed_dictionaries({}, optional={"key": _NAMES}), max_size=2
                        ),
                    },
                ),
            },
        ),
    },
)
_CONFIG = st.fixed_dictionaries(
    {"metadata": st.fixed_dictionaries(
        {"name": st.just("d")},
        optional={
            "labels": st.dictionaries(_NAMES, _NAMES, max_size=2),
            "finalizers": st.lists(_NAMES, max_size=3),
        },
    )},
    optional={"spec": _SPEC},
)  # fmt: skip


def _config(body: Obj) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", **copy.deepcopy(body)}


def _apply(live: Obj | None, config: Obj, manager: str, force: bool) -> Obj | None:
    """The applied object, or None for a conflict; what does not fit is not applied."""
    if MANAGER.misfits(config):
        return live
    try:
        return MANAGER.apply(live, config, Who(manager, "apps/v1"), force, NOW)
    except StatusError as e:
        assert (e.code, e.reason) == (409, "Conflict"), e.message
        return None


def _owned_paths_exist(obj: Obj) -> None:
    """Every managedFields entry decodes, and names a manager once per operation."""
    seen = set()
    for entry in obj["metadata"].get("managedFields") or []:
        key = (entry["manager"], entry["operation"], entry.get("subresource", ""))
        assert key not in seen
        seen.add(key)
        from_fields_v1(entry["fieldsV1"])


@given(_CONFIG, _CONFIG, _CONFIG, st.booleans())
def test_two_appliers_and_an_updater_meet_only_conflicts(
    first: Obj, second: Obj, update: Obj, force: bool
) -> None:
    assume(not MANAGER.misfits(_config(first)))
    live = _apply(None, _config(first), "one", False)
    assert live is not None  # nothing to conflict with on a create
    _owned_paths_exist(live)
    after = _apply(live, _config(second), "two", force)
    if after is None:
        assert not force
        after = live
    _owned_paths_exist(after)
    new = {**_config(update), "metadata": {**update["metadata"]}}
    if MANAGER.misfits(new):
        return
    MANAGER.update(after, new, Who("editor", "apps/v1"), NOW)
    _owned_paths_exist(new)
    again = _apply(new, _config(first), "one", True)
    assert again is not None
    _owned_paths_exist(again)


@given(_CONFIG)
def test_applying_the_same_configuration_twice_changes_nothing(body: Obj) -> None:
    assume(not MANAGER.misfits(_config(body)))
    once = _apply(None, _config(body), "one", False)
    assert once is not None
    shape(once)  # as stored: what Go leaves out (an empty list) is not there to own
    twice = _apply(once, _config(body), "one", False)
    assert twice is not None
    shape(twice)
    assert twice == once
