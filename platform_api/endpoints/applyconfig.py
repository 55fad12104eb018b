"""Server-side apply's configuration, read and checked as kube's apply handler and field
manager read it, before any object is: parsed as YAML (or CBOR), no managedFields, the
target's type, a fit to its schema, numbers its Go type takes, repeated keys per
``fieldValidation``.  The apply itself (patch.py, and scale.py for a Scale) merges it.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.codec import (
    BodyError,
    DepthError,
    Duplicates,
    cbor,
    duplicate_key_lines,
    parse_json,
    parse_yaml,
)
from platform_api.codec.bounds import as_interface_values
from platform_api.endpoints.scope import Scope
from platform_api.fieldmanager import fit
from platform_api.fieldmanager.manager import FieldManager
from platform_api.gotext import json_kind

Obj = dict[str, Any]


def checked_apply_config(
    scope: Scope,
    data: bytes,
    level: str,
    from_cbor: bool,
    target: tuple[str, str],
    manager: FieldManager,
    custom: bool,
) -> Obj:
    """An applied configuration of ``target`` (apiVersion, kind), parsed and checked as
    kube's apply handler and field manager check it: no managedFields, the target's
    type, a fit to its schema, numbers its Go type takes, duplicate keys per
    ``fieldValidation``."""
    config, duplicates = _parse_config(data, from_cbor)
    meta = config.get("metadata")
    # unstructured's GetManagedFields reads only a list of objects: anything else is nil
    # to the check, and the schema's to refuse
    entries = meta.get("managedFields") if isinstance(meta, dict) else None
    if isinstance(entries, list) and all(isinstance(e, dict) for e in entries):
        raise errors.bad_request("metadata.managedFields must be nil")
    version, kind = config.get("apiVersion"), config.get("kind")
    aliases = scope.handlers.aliases
    if aliases is not None and isinstance(version, str):
        version, alias = aliases.canonical_api_version(version)
        if alias:
            config["apiVersion"] = version
            scope.ctx.render_group = scope.ctx.render_group or alias
    if (version, kind) != target:  # kube's field manager's version check
        raise errors.bad_request(f"invalid object type: {_group_version_kind(version, kind)}")
    misfits = manager.misfits(config)
    if misfits:  # whatever fieldValidation says, as kube's field manager
        raise errors.typed_patch_failed(*meta_of(config), *target, fit.message(misfits))
    # a built-in kind's object is converted to its Go type; a custom resource stays JSON
    unconvertible = None
    if not custom and fit.has_conversions(config):
        unconvertible = fit.convert_numbers(manager.typed, manager.node, config)
    if unconvertible is not None:
        raise errors.conversion_failed(meta_of(config), *target, unconvertible)
    if duplicates and level != "Ignore":
        # kube checks the configuration with yaml.v2's strict mode: its own wording, by line.
        lines = duplicate_key_lines(data)
        if level == "Strict":
            raise errors.bad_request(
                "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal "
                "errors:\n  " + "\n  ".join(lines)
            )
        for line in lines:
            scope.ctx.warn(line)
    return config


def _parse_config(data: bytes, from_cbor: bool) -> tuple[Obj, Duplicates]:
    """The applied configuration as JSON values (kube names every failure YAML's)."""
    if from_cbor:
        try:
            config = cbor.decode(data)
        except cbor.CBORError as e:
            raise errors.bad_request(f"error decoding YAML: {e}") from None
        if not isinstance(config, dict):
            got = "array" if isinstance(config, list) else "primitives"
            raise errors.bad_request(
                f"error decoding YAML: cbor: cannot unmarshal {got} into Go value of type "
                "map[string]interface {}"
            )
        return config, {}
    try:
        config, duplicates = _parse_apply_text(data)
        if isinstance(config, dict):
            as_interface_values(data, config)  # YAML's integers too
    except DepthError as e:
        problem = f"error converting YAML to JSON: {e.yaml_text()}"
        raise errors.bad_request(f"error decoding YAML: {problem}") from None
    except BodyError as e:
        if e.bare:  # go-yaml's own text, which sigs.k8s.io/yaml leads in
            raise errors.bad_request(
                f"error decoding YAML: error converting YAML to JSON: {e}"
            ) from None
        raise errors.bad_request(f"error decoding YAML: {e}") from None
    if config is None:  # empty, null or comments only: an object of no type to kube
        raise errors.bad_request("invalid object type: /, Kind=")
    if not isinstance(config, dict):
        raise errors.bad_request(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
            f"unmarshal {json_kind(config)} into Go value of type map[string]interface {{}}"
        )
    return config, duplicates


def meta_of(config: Obj) -> tuple[str, str]:
    """The namespace and name an applied configuration gives itself (kube's messages):
    as an unstructured object's accessors read them, a value that is no string is none."""
    meta = config.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    namespace, name = meta.get("namespace"), meta.get("name")
    return (
        namespace if isinstance(namespace, str) else "",
        name if isinstance(name, str) else "",
    )


def _parse_apply_text(data: bytes) -> tuple[Any, Duplicates]:
    """kube reads an apply configuration as YAML.  kubectl sends JSON, which is YAML and
    many times faster to parse as JSON; what JSON refuses (a trailing comma, ``}}``, a bare
    word) may still be YAML, so YAML has the last word, its errors included."""
    if data.lstrip()[:1] == b"{":
        try:
            return parse_json(data, unstructured=True)
        except DepthError:
            raise
        except BodyError:
            pass
    return parse_yaml(data)


def _group_version_kind(version: Any, kind: Any) -> str:
    """The GroupVersionKind of an unstructured object, as Go prints it; an apiVersion
    that does not parse (two slashes) leaves all of it empty."""
    version = version if isinstance(version, str) else ""
    kind = kind if isinstance(kind, str) else ""
    if version.count("/") > 1:
        version = kind = ""
    group, _, number = version.rpartition("/")
    return f"{group}/{number}, Kind={kind}"
