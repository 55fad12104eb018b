"""Table columns of the kinds that bound what runs and how much: ResourceQuotas,
PodDisruptionBudgets, PriorityClasses and API Priority and Fairness's FlowSchemas and
PriorityLevelConfigurations (kube's printResourceQuota, printPodDisruptionBudget,
printPriorityClass, printFlowSchema and printPriorityLevelConfiguration).

LimitRanges, Roles and ClusterRoles have no printer in kube: Name and Created At.
"""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.printers import AGE, column, created, meta, register

Obj = dict[str, Any]
FLOWCONTROL = "flowcontrol.apiserver.platform.io"


def _quota_usage(obj: Obj) -> list[str]:
    """The Request and Limit cells: ``resource: used/hard`` for each resource the status
    holds a hard limit for, by name; ``limits.*`` resources in the second."""
    status = obj.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        pieces = resource.split(".")
        shown = limits if len(pieces) > 1 and pieces[0] == "limits" else requests
        shown.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [", ".join(requests), ", ".join(limits)]


register(
    "",
    "resourcequotas",
    (
        column(
            "Request",
            "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        column(
            "Limit",
            "Limits control the maximum amount of cpu/memory that a container may use "
            "independent of contention on the node.",
        ),
        AGE,
    ),
    lambda o: [*_quota_usage(o), created(o)],
)


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


register(
    "policy",
    "poddisruptionbudgets",
    (
        column("Min Available", "The minimum number of pods that must be available."),
        column("Max Unavailable", "The maximum number of pods that may be unavailable."),
        column(
            "Allowed Disruptions",
            "Calculated number of pods that may be disrupted at this time.",
            "integer",
        ),
        AGE,
    ),
    lambda o: [
        _int_or_string((o.get("spec") or {}).get("minAvailable")),
        _int_or_string((o.get("spec") or {}).get("maxUnavailable")),
        (o.get("status") or {}).get("disruptionsAllowed", 0),
        created(o),
    ],
)
# kube prints the preemption policy after the age, and not only in wide output
register(
    "scheduling.platform.io",
    "priorityclasses",
    (
        column(
            "Value",
            "value represents the integer value of this priority class. This is the actual "
            "priority that pods receive when they have the name of this class in their pod "
            "spec.",
            "integer",
        ),
        column(
            "Global-Default",
            "globalDefault specifies whether this PriorityClass should be considered as the "
            "default priority for pods that do not have any priority class. Only one "
            "PriorityClass can be marked as `globalDefault`. However, if more than one "
            "PriorityClasses exists with their `globalDefault` field set to true, the smallest "
            "value of such global default PriorityClasses will be used as the default priority.",
            "boolean",
        ),
        AGE,
        column(
            "PreemptionPolicy",
            "preemptionPolicy is the Policy for preempting pods with lower priority. One of "
            "Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
        ),
    ),
    lambda o: [
        o.get("value", 0),
        bool(o.get("globalDefault")),
        created(o),
        o.get("preemptionPolicy") or "",
    ],
)


def _flow_schema_cells(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    method = spec.get("distinguisherMethod")
    conditions = (obj.get("status") or {}).get("conditions") or []
    dangling = next((c.get("status", "") for c in conditions if c.get("type") == "Dangling"), "?")
    return [
        (spec.get("priorityLevelConfiguration") or {}).get("name", ""),
        spec.get("matchingPrecedence", 0),
        method.get("type", "") if method is not None else "<none>",
        created(obj),
        dangling,
    ]


register(
    FLOWCONTROL,
    "flowschemas",
    (
        column(
            "PriorityLevel",
            "`name` is the name of the priority level configuration being referenced Required.",
        ),
        column(
            "MatchingPrecedence",
            "`matchingPrecedence` is used to choose among the FlowSchemas that match a given "
            "request. The chosen FlowSchema is among those with the numerically lowest (which "
            "we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence "
            "value must be ranged in [1,10000]. Note that if the precedence is not specified, "
            "it will be set to 1000 as default.",
        ),
        column(
            "DistinguisherMethod",
            "`distinguisherMethod` defines how to compute the flow distinguisher for requests "
            "that match this schema. `nil` specifies that the distinguisher is disabled and "
            "thus will always be the empty string.",
        ),
        AGE,
        column("MissingPL", "references a broken or non-existent PriorityLevelConfiguration"),
    ),
    _flow_schema_cells,
    # kube's FlowSchemaSequence: by precedence, then by name
    sort_key=lambda o: ((o.get("spec") or {}).get("matchingPrecedence", 0), meta(o).get("name")),
)


_QUEUING = ("queues", "handSize", "queueLengthLimit")


def _priority_level_cells(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    limited = spec.get("limited")
    shares: Any = "<none>"
    queuing: Obj = {}
    if limited is not None:
        shares = limited.get("nominalConcurrencyShares", 0)
        queuing = (limited.get("limitResponse") or {}).get("queuing") or {}
    queues = [queuing.get(k, 0) if queuing else "<none>" for k in _QUEUING]
    return [spec.get("type", ""), shares, *queues, created(obj)]


register(
    FLOWCONTROL,
    "prioritylevelconfigurations",
    (
        column(
            "Type",
            "`type` indicates whether this priority level is subject to limitation on request "
            'execution.  A value of `"Exempt"` means that requests of this priority level are '
            "not subject to a limit (and thus are never queued) and do not detract from the "
            'capacity made available to other priority levels.  A value of `"Limited"` means '
            "that (a) requests of this priority level _are_ subject to limits and (b) some of "
            "the server's limited capacity is made available exclusively to this priority "
            "level. Required.",
        ),
        column(
            "NominalConcurrencyShares",
            "`nominalConcurrencyShares` (NCS) contributes to the computation of the "
            "NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution "
            "seats available at this priority level. This is used both for requests dispatched "
            "from this priority level as well as requests dispatched from other priority "
            "levels borrowing seats from this level. The server's concurrency limit (ServerCL) "
            "is divided among the Limited priority levels in proportion to their NCS values:"
            "\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority "
            "level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the "
            "expense of every other priority level.\n\nIf not specified, this field defaults to "
            "a value of 30.\n\nSetting this field to zero supports the construction of a "
            '"jail" for this priority level that is used to hold some request(s)',
        ),
        column(
            "Queues",
            "`queues` is the number of queues for this priority level. The queues exist "
            "independently at each apiserver. The value must be positive.  Setting it to 1 "
            "effectively precludes shufflesharding and thus makes the distinguisher method of "
            "associated flow schemas irrelevant.  This field has a default value of 64.",
        ),
        column(
            "HandSize",
            "`handSize` is a small positive number that configures the shuffle sharding of "
            "requests into queues.  When enqueuing a request at this priority level the "
            "request's flow identifier (a string pair) is hashed and the hash value is used to "
            "shuffle the list of queues and deal a hand of the size specified here.  The "
            "request is put into one of the shortest queues in that hand. `handSize` must be no "
            "larger than `queues`, and should be significantly smaller (so that a few heavy "
            "flows do not saturate most of the queues).  See the user-facing documentation for "
            "more extensive guidance on setting this field.  This field has a default value of "
            "8.",
        ),
        column(
            "QueueLengthLimit",
            "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a "
            "given queue of this priority level at a time; excess requests are rejected.  This "
            "value must be positive.  If not specified, it will be defaulted to 50.",
        ),
        AGE,
    ),
    _priority_level_cells,
)
