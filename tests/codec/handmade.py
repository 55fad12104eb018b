"""Objects no GET returns (request bodies, subresources, errors), as this server writes them.

Each is in its canonical form (what kube's JSON would write for it: Go's zero values where
there is no ``omitempty``), so a round trip through Protobuf must give it back unchanged.
Groups are branded (``*.platform.io``), as the server's clients send them.
"""

from __future__ import annotations

from typing import Any

META = {"name": "x", "namespace": "ns", "uid": "3c1f4a7e-0000-4000-8000-000000000001"}
LONG = "a" * 300 + "\u00e9\u4e2d\U0001f600"  # multi-byte varint lengths, UTF-8

OBJECTS: dict[str, dict[str, Any]] = {
    "binding": {
        "kind": "Binding",
        "apiVersion": "v1",
        "metadata": {"name": "web", "namespace": "ns"},
        "target": {"kind": "Node", "name": "n1"},
    },
    "eviction": {
        "kind": "Eviction",
        "apiVersion": "policy/v1",
        "metadata": {"name": "web", "namespace": "ns"},
        "deleteOptions": {
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": META["uid"], "resourceVersion": "12"},
            "dryRun": ["All"],
        },
    },
    "tokenrequest": {
        "kind": "TokenRequest",
        "apiVersion": "authentication.platform.io/v1",
        "metadata": {
            "name": "builder",
            "namespace": "ns",
            "creationTimestamp": "2024-02-29T23:59:59Z",
        },
        "spec": {
            "audiences": ["https://platform.default.svc"],
            "expirationSeconds": 3600,
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web", "uid": "u"},
        },
        "status": {
            "token": "eyJhbGciOi" + "x" * 200,
            "expirationTimestamp": "2024-03-01T00:59:59Z",
        },
    },
    "componentstatus": {
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": "etcd-0"},
        "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
    },
    "deleteoptions-meta": {
        "kind": "DeleteOptions",
        "apiVersion": "meta.platform.io/v1",
        "gracePeriodSeconds": 30,
        "preconditions": {"uid": "u", "resourceVersion": "1"},
        "orphanDependents": False,
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
        "ignoreStoreReadErrorWithClusterBreakingPotential": True,
    },
    "deleteoptions-group": {
        "kind": "DeleteOptions",
        "apiVersion": "rbac.authorization.platform.io/v1",
        "propagationPolicy": "Orphan",
    },
    "status-success": {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "web", "group": "apps", "kind": "deployments", "uid": "u"},
    },
    "status-invalid": {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "5", "continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"},
        "status": "Failure",
        "message": LONG,
        "reason": "Invalid",
        "details": {
            "name": "web",
            "kind": "Deployment",
            "causes": [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "spec"},
                {"reason": "FieldValueInvalid", "message": "bad"},
            ],
            "retryAfterSeconds": 3,
        },
        "code": 422,
    },
    "event-numbers": {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {**META, "generation": 2**62, "deletionGracePeriodSeconds": 0},
        "involvedObject": {},
        "reason": LONG,
        "source": {},
        "firstTimestamp": "1969-12-31T23:59:59Z",  # before the epoch: negative seconds
        "lastTimestamp": None,
        "count": -5,
        "eventTime": "0001-01-01T00:00:01.000001Z",
        "reportingComponent": "",
        "reportingInstance": "",
    },
    "admissionreview": {
        "kind": "AdmissionReview",
        "apiVersion": "admission.platform.io/v1",
        "request": {
            "uid": "r1",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "subResource": "scale",
            "requestKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "requestSubResource": "scale",
            "name": "web",
            "namespace": "ns",
            "operation": "UPDATE",
            "userInfo": {"username": "alice", "groups": ["dev"], "extra": {"scopes": ["a"]}},
            "object": {"kind": "Scale", "apiVersion": "autoscaling/v1", "spec": {"replicas": 2}},
            "oldObject": None,
            "dryRun": False,
            "options": {"kind": "UpdateOptions", "apiVersion": "meta.platform.io/v1"},
        },
        "response": {
            "uid": "r1",
            "allowed": True,
            "patch": "W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6MX1d",
            "patchType": "JSONPatch",
            "auditAnnotations": {"k": "v"},
            "warnings": ["careful"],
        },
    },
    "crd-unions": {
        "kind": "CustomResourceDefinition",
        "apiVersion": "apiextensions.platform.io/v1",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "things", "kind": "Thing"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "id": "thing",
                            "$schema": "http://json-schema.org/draft-04/schema#",
                            "$ref": "#/definitions/base",
                            "type": "object",
                            "items": [{"type": "string"}, {"type": "integer"}],
                            "additionalItems": True,
                            "dependencies": {
                                "a": ["b", "c"],
                                "d": {"required": ["e"]},
                            },
                            "definitions": {"base": {"type": "object"}},
                            "patternProperties": {"^x-": {"type": "string", "format": "byte"}},
                            "additionalProperties": {"type": "object", "nullable": True},
                            "enum": [{"a": 1}, [1, 2], "s", 1.5, None],
                            "example": {"nested": {"deep": [True]}},
                            "minProperties": 0,
                            "maxLength": 0,
                        }
                    },
                }
            ],
        },
        "status": {
            "conditions": [
                {
                    "type": "Established",
                    "status": "True",
                    "lastTransitionTime": None,
                }
            ],
            "acceptedNames": {"plural": "things", "kind": "Thing"},
            "storedVersions": ["v1"],
        },
    },
}
