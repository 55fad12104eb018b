"""The query and path parameters of the OpenAPI operations: what each of kube's options
types (ListOptions, CreateOptions, PatchOptions, DeleteOptions, GetOptions) adds to an
operation, in this server's own shorter words."""

from __future__ import annotations

from typing import Any

Params = list[dict[str, Any]]


def param(
    name: str, description: str, kind: str = "string", where: str = "query"
) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where, "description": description}
    if where == "path":
        param["required"] = True
    param["schema"] = {"type": kind, "uniqueItems": True}
    return param


PRETTY = param("pretty", "If 'true', then the output is pretty printed.")
NAMESPACE = param(
    "namespace", "object name and auth scope, such as for teams and projects", where="path"
)
_DRY_RUN = param("dryRun", "When present, modifications are not persisted (All).")
_SELECTORS = [
    param("continue", "The continue token of the previous chunk of a paged list."),
    param("fieldSelector", "Restricts the objects listed by their fields."),
    param("labelSelector", "Restricts the objects listed by their labels."),
    param("limit", "The most objects one chunk of the list holds.", "integer"),
    param("resourceVersion", "The version of the state the list or watch starts from."),
    param("resourceVersionMatch", "How resourceVersion applies to a list (Exact, NotOlderThan)."),
    param("sendInitialEvents", "A watch starts with the current objects.", "boolean"),
    # alpha (ShardedListAndWatch, off): ignored, as kube ignores it while its gate is off
    param("shardSelector", "Restricts the objects listed to a shard of them (alpha)."),
    param("timeoutSeconds", "Ends the call after this many seconds.", "integer"),
]
LIST = [
    param("allowWatchBookmarks", "The watch may send BOOKMARK events.", "boolean"),
    *_SELECTORS,
    param("watch", "Watch for changes instead of listing.", "boolean"),
]
WRITE = [
    _DRY_RUN,
    param("fieldManager", "The name of the actor or entity making these changes."),
    param("fieldValidation", "What to do with unknown or duplicate fields: Ignore, Warn, Strict."),
]
PATCH_PARAMS = [*WRITE, param("force", "Force an apply past conflicts.", "boolean")]
DELETE = [
    _DRY_RUN,
    param("gracePeriodSeconds", "Seconds before the object is deleted.", "integer"),
    param(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "Delete an object that cannot be read from storage.",
        "boolean",
    ),
    param("orphanDependents", "Deprecated: use propagationPolicy.", "boolean"),
    param("propagationPolicy", "Whether and how dependents are garbage collected."),
]
DELETE_COLLECTION = [*DELETE, *_SELECTORS]
# what a custom kind's read takes (kube's CRD builder adds GetOptions)
GET_VERSION = param("resourceVersion", "The version of the state the read is served from.")
