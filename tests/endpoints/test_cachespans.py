"""Which storage span a list opens: kube's delegator's choice between etcd and its
watch cache (staging/src/k8s.io/apiserver/pkg/storage/cacher/delegator)."""

from __future__ import annotations

import pytest

from platform_api.endpoints.cachespans import from_etcd
from platform_api.endpoints.list import ListParams
from platform_api.fieldselectors import parse_field_selector
from platform_api.selectors import parse_label_selector


def _params(version: str = "", match: str = "", limit: int = 0, token: str = "") -> ListParams:
    everything, no_fields = parse_label_selector(""), parse_field_selector("")
    return ListParams(version, match, limit, token, everything, no_fields, None, False, False, None)


@pytest.mark.parametrize(
    ("params", "etcd"),
    [
        (_params(), True),  # a consistent list
        (_params(limit=5), True),
        (_params("7", "Exact"), True),
        (_params("7", limit=5), True),  # the legacy exact read: a limit and a version
        (_params("0"), False),  # any state: the cache's
        (_params("0", limit=5), False),
        (_params("7"), False),  # not older than
        (_params("7", "NotOlderThan", limit=5), False),
        (_params(token="abc", limit=5), False),  # a continued list: the cache's snapshot
    ],
)
def test_kubes_delegator_reads_these_lists_from_etcd(params: ListParams, etcd: bool) -> None:
    assert from_etcd(params) is etcd
