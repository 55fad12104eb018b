"""An aggregated server's legacy resource list as aggregated discovery entries, as kube's
ConvertGroupVersionIntoToDiscovery converts it."""

from __future__ import annotations

from platform_api.aggregator.remotediscovery import to_aggregated

EMPTY = {"group": "", "version": "", "kind": ""}


def test_resources_with_their_subresources() -> None:
    listed = [
        {"name": "flunders/status", "namespaced": True, "kind": "Flunder", "verbs": ["get"]},
        {
            "name": "flunders",
            "singularName": "flunder",
            "namespaced": True,
            "kind": "Flunder",
            "verbs": ["get", "list"],
            "shortNames": ["fl"],
            "categories": ["all"],
        },
        {
            "name": "fischers",
            "singularName": "",
            "namespaced": False,
            "kind": "Fischer",
            "verbs": [],
        },
        {"name": "orphans/scale", "namespaced": False, "verbs": ["get"]},
    ]
    assert to_aggregated(listed) == [
        {
            "resource": "flunders",
            "responseKind": {"group": "", "version": "", "kind": "Flunder"},
            "scope": "Namespaced",
            "singularResource": "flunder",
            "verbs": ["get", "list"],
            "shortNames": ["fl"],
            "categories": ["all"],
            "subresources": [
                {
                    "subresource": "status",
                    "responseKind": {"group": "", "version": "", "kind": "Flunder"},
                    "verbs": ["get"],
                }
            ],
        },
        {
            "resource": "fischers",
            "responseKind": {"group": "", "version": "", "kind": "Fischer"},
            "scope": "Cluster",
            "verbs": [],
        },
        {
            "resource": "orphans",
            "responseKind": EMPTY,
            "scope": "Cluster",
            "verbs": None,
            "subresources": [{"subresource": "scale", "responseKind": EMPTY, "verbs": ["get"]}],
        },
    ]
