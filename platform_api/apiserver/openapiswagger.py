"""The paths of ``/openapi/v2``: the v3 paths (openapipaths.py) in Swagger 2.0's words.

kube's v2 document lists the same operations as its v3 documents, with the same IDs,
tags and actions; only the wording differs: a request body is a ``body`` parameter, a
parameter's type sits on it rather than in a schema, responses name one schema and the
operation lists what it consumes and produces.  kube-openapi then moves every parameter
that is not particular to a kind (not a ``name``, not a kind's own body, not
``dryRun`` or ``fieldValidation``, which kubectl once looked for in place) to the
document's ``parameters``, named after it and a hash of it, and refers to it there.
Besides the resources, the document describes the paths of openapiroots.py.
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Iterable
from typing import Any

import orjson

from platform_api.apiserver.openapipaths import CUSTOM_MEDIA, META, PREFIX
from platform_api.apiserver.openapiroots import BEARER, ISSUER_OPERATIONS
from platform_api.gotext import go_escaped

DEFINITIONS = "#/definitions/"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
SECURITY: list[dict[str, list[str]]] = [{"BearerToken": []}]
SECURITY_DEFINITIONS = BEARER

Obj = dict[str, Any]


def _ref(node: Obj) -> Obj:
    """A v3 schema reference as a v2 one (``#/components/schemas/`` -> ``#/definitions/``)."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(PREFIX):
        return {"$ref": DEFINITIONS + ref[len(PREFIX) :]}
    return node


def parameter(param: Obj) -> Obj:
    """A v3 query or path parameter in v2 form: its schema's type on the parameter."""
    out = {k: v for k, v in param.items() if k != "schema"}
    out.update(param.get("schema") or {})
    return dict(sorted(out.items()))


def _converted(params: Iterable[Obj], converted: dict[int, Any]) -> list[Obj]:
    """The v2 forms of v3 parameters, one object for each v3 object (the v3 builder
    shares its parameters between operations: ``share_parameters`` then writes each
    distinct one once); ``converted`` keeps the v3 objects alive while it holds their ids."""
    out = []
    for p in params:
        entry = converted.get(id(p))
        if entry is None:
            entry = converted[id(p)] = (p, parameter(p))
        out.append(entry[1])
    return out


def operation(op: Obj, converted: dict[int, Any], custom: bool = False) -> Obj:
    """One v3 operation in v2 form, its keys in kube's order (sorted); ``custom``: a
    custom resource's, which consumes what kube's CRD builder says (JSON and YAML)."""
    params = _converted(op.get("parameters", ()), converted)
    body = op.get("requestBody")
    responses: Obj = {}
    produces: list[str] = []
    for code, response in op["responses"].items():
        content = response.get("content")
        if content is None:
            responses[code] = dict(response)
            continue
        produces = produces or list(content)
        schema = _ref(next(iter(content.values()))["schema"])
        responses[code] = {"description": response["description"], "schema": schema}
    out: Obj = {}
    if body is not None:
        out["consumes"] = list(body["content"])
        schema = _ref(next(iter(body["content"].values()))["schema"])
        sent: Obj = {"in": "body", "name": "body"}
        if body.get("required"):
            sent["required"] = True
        sent["schema"] = schema
        params = sorted([sent, *params], key=lambda p: str(p["name"]))
    elif "x-kubernetes-action" in op:
        out["consumes"] = list(CUSTOM_MEDIA) if custom else ["*/*"]
    elif op["operationId"] not in ISSUER_OPERATIONS:  # discovery, /version/: what it produces
        out["consumes"] = list(produces)
    out["description"] = op["description"]
    out["operationId"] = op["operationId"]
    if params:
        out["parameters"] = params
    out["produces"] = produces
    out["responses"] = responses
    out["schemes"] = ["https"]
    out["tags"] = op["tags"]
    out.update((k, v) for k, v in op.items() if k.startswith("x-"))
    return out


def paths(v3_paths: Obj, converted: dict[int, Any], custom: Collection[str] = ()) -> Obj:
    """Every path of a v3 document in v2 form (``converted``: see ``_converted``;
    ``custom``: the paths of custom resources)."""
    out: Obj = {}
    for path, item in v3_paths.items():
        v2_item: Obj = {}
        for key, value in item.items():
            if key == "parameters":
                v2_item[key] = _converted(value, converted)
            else:
                v2_item[key] = operation(value, converted, path in custom)
        out[path] = v2_item
    return out


def _shared(param: Obj) -> bool:
    """Whether kube-openapi moves this parameter to the document's ``parameters``."""
    where, name = param.get("in"), param.get("name")
    if name == "name" and where in ("query", "path"):
        return False
    if where == "query" and name in ("fieldValidation", "dryRun"):
        return False
    if where == "body":  # a kind's own body stays; the generic ones are shared
        ref = (param.get("schema") or {}).get("$ref", "")
        return str(ref).startswith(DEFINITIONS + META.split("pkg.")[0])
    return True


# Go's order of a parameter's keys (kube-openapi's Parameter.MarshalJSON: its reference,
# validations, simple schema, then its own properties), which the hash is taken over.
_GO_ORDER = (
    "$ref",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "type",
    "format",
    "items",
    "collectionFormat",
    "default",
    "example",
    "description",
    "name",
    "in",
    "required",
    "schema",
    "allowEmptyValue",
)


def _go_json(param: Obj) -> bytes:
    """The parameter as Go's encoder writes it."""
    ordered = {k: param[k] for k in _GO_ORDER if k in param}
    return go_escaped(orjson.dumps(ordered))


def _hash(text: bytes) -> str:
    """kube-openapi's name suffix: FNV-1 (64 bits) of the parameter's JSON, its first 6
    bytes in URL-safe base64 (8 characters)."""
    h = 0xCBF29CE484222325
    for byte in text:
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        h ^= byte
    return base64.urlsafe_b64encode(h.to_bytes(8, "big")[:6]).decode()


def _param_lists(doc_paths: Obj) -> Iterable[list[Obj]]:
    for item in doc_paths.values():
        for method in _METHODS:
            if method in item and "parameters" in item[method]:
                yield item[method]["parameters"]
        if "parameters" in item:
            yield item["parameters"]


def share_parameters(doc_paths: Obj) -> tuple[Obj, Obj]:
    """``doc_paths`` with the shared parameters as references (new lists: the paths given
    are left as they are), and the document's ``parameters``, sorted by name."""
    seen: dict[int, bytes | None] = {}  # each parameter object's text (None: not shared)
    texts: dict[bytes, Obj] = {}
    for params in _param_lists(doc_paths):
        for p in params:
            if id(p) not in seen:
                seen[id(p)] = _go_json(p) if _shared(p) else None
            text = seen[id(p)]
            if text is not None:
                texts.setdefault(text, p)
    names: dict[bytes, str] = {}
    shared: Obj = {}
    for text in sorted(texts):
        base = str(texts[text].get("name") or "param")
        name, i = f"{base}-{_hash(text)}", 0
        while name in shared:  # a hash conflict
            i += 1
            name = f"{base}-{i}"
        shared[name], names[text] = texts[text], name
    refs = {p_id: {"$ref": "#/parameters/" + names[t]} for p_id, t in seen.items() if t is not None}

    def referring(params: list[Obj]) -> list[Obj]:
        return [refs.get(id(p), p) for p in params]

    out: Obj = {}
    for path, item in doc_paths.items():
        new_item: Obj = {}
        for key, value in item.items():
            if key == "parameters":
                new_item[key] = referring(value)
            elif "parameters" in value:
                new_item[key] = {**value, "parameters": referring(value["parameters"])}
            else:
                new_item[key] = value
        out[path] = new_item
    return out, dict(sorted(shared.items()))
