"""Completion indexes of Indexed Jobs (kube's indexed_job_utils): which indexes
succeeded or failed, as the interval strings ``status.completedIndexes`` and
``status.failedIndexes`` hold ("1,3-5,7"), which index a pod runs, and which indexes
still need a pod.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
Interval = tuple[int, int]  # first, last (inclusive)

PREFIX = "batch.kubernetes.io/"
COMPLETION_INDEX = PREFIX + "job-completion-index"  # annotation and label
FAILURE_COUNT = PREFIX + "job-index-failure-count"
IGNORED_FAILURE_COUNT = PREFIX + "job-index-ignored-failure-count"
INDEX_ENV = "JOB_COMPLETION_INDEX"
MAX_GENERATED_NAME = 58  # kube's names.MaxGeneratedNameLength: 63 less the 5 random characters


class Indexes:
    """Ordered, disjoint, non-adjacent intervals of indexes (kube's orderedIntervals)."""

    def __init__(self, intervals: list[Interval] | None = None) -> None:
        self.intervals = intervals or []

    @classmethod
    def parse(cls, text: str | None, completions: int) -> Indexes:
        """kube's parseIndexesFromString: corrupt parts are skipped, indexes at or past
        ``completions`` dropped."""
        out: list[Interval] = []
        for part in (text or "").split(",") if text else ():
            bounds = part.split("-")
            first = _atoi(bounds[0])
            if first is None:
                continue
            if first >= completions:
                break
            last = first
            if len(bounds) > 1:
                parsed = _atoi(bounds[1])
                if parsed is None:
                    continue
                last = min(parsed, completions - 1)
            if out and out[-1][1] == first - 1:
                out[-1] = (out[-1][0], last)
            else:
                out.append((first, last))
        return cls(out)

    def with_indexes(self, indexes: list[int]) -> Indexes:
        return self.merge(Indexes([(i, i) for i in sorted(set(indexes))]))

    def merge(self, other: Indexes) -> Indexes:
        out: list[Interval] = []
        for first, last in sorted(self.intervals + other.intervals):
            if out and first <= out[-1][1] + 1:
                if last > out[-1][1]:
                    out[-1] = (out[-1][0], last)
            else:
                out.append((first, last))
        return Indexes(out)

    def total(self) -> int:
        return sum(last - first + 1 for first, last in self.intervals)

    def has(self, index: int) -> bool:
        return any(first <= index <= last for first, last in self.intervals)

    def __str__(self) -> str:
        parts = []
        for first, last in self.intervals:
            if last == first:
                parts.append(str(first))
            else:
                parts.append(f"{first}{',' if last == first + 1 else '-'}{last}")
        return ",".join(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Indexes) and self.intervals == other.intervals

    __hash__ = None  # type: ignore[assignment]


def _atoi(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def completion_index(pod: Obj) -> int | None:
    """The pod's index from its annotation; None when absent or not a number >= 0."""
    value = (pod["metadata"].get("annotations") or {}).get(COMPLETION_INDEX)
    index = _atoi(value) if isinstance(value, str) else None
    return index if index is not None and index >= 0 else None


def _count_annotation(pod: Obj, key: str) -> int:
    value = _atoi((pod["metadata"].get("annotations") or {}).get(key, "") or "")
    return value if value is not None and 0 <= value <= 2**31 - 1 else 0


def failure_count(pod: Obj) -> int:
    return _count_annotation(pod, FAILURE_COUNT)


def absolute_failure_count(pod: Obj) -> int:
    return _count_annotation(pod, FAILURE_COUNT) + _count_annotation(pod, IGNORED_FAILURE_COUNT)


def indexes_of(pods: list[Obj]) -> list[int]:
    return [i for p in pods if (i := completion_index(p)) is not None]


def first_pending(count: int, completions: int, taken: Indexes) -> list[int]:
    """The lowest ``count`` indexes below ``completions`` not in ``taken``."""
    out: list[int] = []
    candidate = 0
    for first, last in taken.intervals:
        while candidate < min(first, completions) and len(out) < count:
            out.append(candidate)
            candidate += 1
        candidate = max(candidate, last + 1)
    while candidate < completions and len(out) < count:
        out.append(candidate)
        candidate += 1
    return out


def generate_name(job_name: str, index: int) -> str:
    """kube's podGenerateNameWithIndex: ``<job>-<index>-``, the job's name cut to fit."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME:
        prefix = prefix[: MAX_GENERATED_NAME - len(suffix)] + suffix
    return prefix


def with_index(template: Obj, job_name: str, index: int) -> tuple[Obj, str]:
    """A pod template for one index (annotation, label, hostname) and its generateName."""
    meta = template.setdefault("metadata", {})
    meta.setdefault("annotations", {})[COMPLETION_INDEX] = str(index)
    meta.setdefault("labels", {})[COMPLETION_INDEX] = str(index)
    template["spec"]["hostname"] = f"{job_name}-{index}"
    return template, generate_name(job_name, index)


def add_index_env(spec: Obj) -> None:
    """Every container and init container gets JOB_COMPLETION_INDEX from the label."""
    path = f"metadata.labels['{COMPLETION_INDEX}']"
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            env = container.setdefault("env", [])
            if not any(e.get("name") == INDEX_ENV for e in env):
                env.append({"name": INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": path}}})


def duplicates_for_removal(pods: list[Obj], completions: int, order: Any) -> tuple[list, list]:
    """kube's appendDuplicatedIndexPodsForRemoval: pods without an index or past the
    completions go, and of pods sharing an index all but the one ``order`` ranks last.
    Returns (to remove, the rest)."""
    remove: list[Obj] = []
    keep: list[Obj] = []
    by_index: dict[int | None, list[Obj]] = {}
    for pod in pods:
        by_index.setdefault(completion_index(pod), []).append(pod)
    for index in sorted(by_index, key=lambda i: -1 if i is None else i):
        group = by_index[index]
        if index is None or index >= completions:
            remove.extend(group)
        elif len(group) == 1:
            keep.append(group[0])
        else:
            ranked = order(group)
            remove.extend(ranked[:-1])
            keep.append(ranked[-1])
    return remove, keep
