"""What an applier stops applying is removed unless owned, as kube-apiserver v1.36
removed it (each case replayed against the reference, with a CRD whose v2 renames
v1's cronSpec to schedule through a conversion webhook)."""

from __future__ import annotations

from typing import Any

from platform_api.fieldmanager.manager import FieldManager, Who
from platform_api.fieldmanager.typed import Typed
from platform_api.fieldmanager.versions import VersionView, View, awaited, read_as, settled
from tests.admission.plugin_kit import run
from tests.fieldmanager.test_versions import kind_schema

Obj = dict[str, Any]
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"
TYPED = Typed(None, unstructured=True)


def _schema(renamed: str) -> Obj:
    port = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
    }
    ports = {"type": "array", "items": port, "x-kubernetes-list-type": "map"}
    ports["x-kubernetes-list-map-keys"] = ["name"]
    labels = {"type": "object", "additionalProperties": {"type": "string"}}
    spec = {renamed: {"type": "string"}, "image": {"type": "string"}, "ports": ports}
    return kind_schema({**spec, "labels": labels})


V1, V2 = _schema("cronSpec"), _schema("schedule")


async def _rename(obj: Obj, api_version: str) -> Obj:
    spec = dict(obj.get("spec") or {})
    old, new = ("schedule", "cronSpec") if api_version == "g/v1" else ("cronSpec", "schedule")
    if old in spec:
        spec[new] = spec.pop(old)
    return {**obj, "apiVersion": api_version, **({"spec": spec} if "spec" in obj else {})}


def _versions(api_version: str) -> View:
    node = {"g/v1": V1, "g/v2": V2}[api_version]

    def convert(obj: Obj) -> Obj:
        return read_as(TYPED, node, awaited(api_version, obj, lambda: _rename(obj, api_version)))

    return VersionView(TYPED, node, convert)


def _manager(version: str) -> FieldManager:
    return FieldManager(TYPED, {"g/v1": V1, "g/v2": V2}[version], False, versions=_versions)


def _cron(version: str, **spec: Any) -> Obj:
    return {"apiVersion": version, "kind": "CronTab", "metadata": {"name": "a"}, "spec": spec}


def _apply(live: Obj | None, config: Obj, manager: str, force: bool = False) -> Obj:
    version = config["apiVersion"]

    async def step() -> Obj:
        return _manager(version).apply(live, config, Who(manager, version), force, T1)

    result: Obj = run(settled(step))
    return result


def _update(live: Obj, new: Obj, manager: str) -> Obj:
    version = new["apiVersion"]

    async def step() -> None:
        _manager(version).update(live, new, Who(manager, version), T1)

    run(settled(step))
    return new


def _owners(obj: Obj) -> dict[str, Any]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def test_a_released_list_item_goes_whole_though_a_field_in_it_is_owned() -> None:
    live = _apply(None, _cron("g/v1", image="i", ports=[{"name": "b", "port": 1}]), "a")
    changed = _cron("g/v1", image="i", ports=[{"name": "b", "port": 2}])
    changed["metadata"] = live["metadata"]
    live = _update(live, changed, "b")
    out = _apply(live, _cron("g/v1", image="i"), "a")
    assert out["spec"] == {"image": "i"}
    assert _owners(out) == {"a": {"f:spec": {"f:image": {}}}}


def test_a_struct_left_with_nothing_a_field_set_sees_goes() -> None:
    """Released fields leave ``spec`` holding an empty list only: kube removes it, and
    with it what another applier of ``spec: {}`` owned."""
    live = _apply(None, _cron("g/v1", image="x", ports=[]), "c")
    live = _apply(live, _cron("g/v1"), "b", force=True)
    out = _apply(live, {**_cron("g/v1"), "spec": {}}, "c")
    assert "spec" not in out
    assert _owners(out) == {"c": {"f:spec": {}}}


def test_an_applier_that_moves_to_another_version_releases_in_the_old_ones_terms() -> None:
    live = _apply(None, _cron("g/v1", cronSpec="1", image="y"), "a")
    out = _apply(live, _cron("g/v2", image="x"), "a")
    assert out["spec"] == {"image": "x"}  # cronSpec, released as v1 named it, is gone
    assert _owners(out) == {"a": {"f:spec": {"f:image": {}}}}


def test_what_the_configuration_applies_stays_across_versions() -> None:
    live = _apply(None, _cron("g/v2", schedule="3", ports=[{"name": "c", "port": 2}]), "b")
    out = _apply(live, {**_cron("g/v1"), "spec": {}}, "b", force=True)
    assert out["spec"] == {}
    assert _owners(out) == {"b": {"f:spec": {}}}


def _emptied_by_the_prune(**owned: Any) -> Obj:
    """``u`` (an Update) owns ``owned`` as set; ``m`` applies an item into it, then stops:
    across versions (``o``'s v2 entry), the item's container is emptied."""
    live = _apply(None, _cron("g/v1", image="i"), "a")
    live = _apply(live, _cron("g/v2", image="i"), "o")
    changed = _cron("g/v1", image="i", **owned)
    changed["metadata"] = live["metadata"]
    live = _update(live, changed, "u")
    item = {"labels": {"k": "1"}} if "labels" in owned else {"ports": [{"name": "p"}]}
    live = _apply(live, _cron("g/v1", image="i", **item), "m")
    return _apply(live, _cron("g/v1", image="i"), "m")


def test_a_map_the_prune_empties_stays_empty_and_owned() -> None:
    out = _emptied_by_the_prune(labels={})
    assert out["spec"] == {"image": "i", "labels": {}}
    assert _owners(out)["u"] == {"f:spec": {"f:labels": {}}}


def test_a_list_the_prune_empties_goes() -> None:
    out = _emptied_by_the_prune(ports=[])
    assert out["spec"] == {"image": "i"}
    assert "u" not in _owners(out)
