"""CRD create validation: kube's messages, paths and order (each case checked against a real
kube-apiserver v1.36; structural-schema and CEL errors belong to the schema tests)."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.validation.names import is_dns1035_label, is_dns1123_subdomain
from tests.apiextensions.builders import crd, create_errors, obj, ver

DNS1035 = is_dns1035_label("A")[0]
SUBDOMAIN = is_dns1123_subdomain("A_")[0]

CASES = [
    pytest.param(
        crd(),
        [],
        id="valid",
    ),
    pytest.param(
        crd(metadata={"name": "bars.example.com"}),
        [
            'metadata.name: Invalid value: "bars.example.com": must be spec.names.plural+"."+spec.group',
        ],
        id="mismatched name",
    ),
    pytest.param(
        crd(group="Example_com", names={"plural": "foos", "kind": "Foo"}),
        [
            f'metadata.name: Invalid value: "foos.Example_com": {SUBDOMAIN}',
            f'spec.group: Invalid value: "Example_com": {SUBDOMAIN}',
        ],
        id="bad group",
    ),
    pytest.param(
        crd(group="example", metadata={"name": "foos.example"}),
        [
            'spec.group: Invalid value: "example": should be a domain with at least one dot',
        ],
        id="group without a dot",
    ),
    pytest.param(
        crd(group="", metadata={"name": "foos."}),
        [
            f'metadata.name: Invalid value: "foos.": {SUBDOMAIN}',
            "spec.group: Required value",
        ],
        id="empty group",
    ),
    pytest.param(
        crd(scope="Global"),
        [
            'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        ],
        id="unknown scope",
    ),
    pytest.param(
        # a plain string to validateEnumStrings: %q, where a named type's is JSON (\u003c)
        crd(scope="a<b", conversion={"strategy": "a>b&"}),
        [
            'spec.scope: Unsupported value: "a<b": supported values: "Cluster", "Namespaced"',
            'spec.conversion.strategy: Unsupported value: "a>b&": supported values: "None", '
            '"Webhook"',
        ],
        id="enum strings quoted as plain strings",
    ),
    pytest.param(
        crd(scope=""),
        [
            "spec.scope: Required value",
        ],
        id="missing scope",
    ),
    pytest.param(
        crd(
            names={
                "plural": "Foos",
                "singular": "F_oo",
                "kind": "foo-",
                "listKind": "foo-",
                "shortNames": ["a b", "ok"],
                "categories": ["A"],
            },
            metadata={"name": "Foos.example.com"},
        ),
        [
            f'metadata.name: Invalid value: "Foos.example.com": {SUBDOMAIN}',
            f'spec.names.plural: Invalid value: "Foos": {DNS1035}',
            f'spec.names.singular: Invalid value: "F_oo": {DNS1035}',
            f'spec.names.kind: Invalid value: "foo-": may have mixed case, but should otherwise match: {DNS1035}',
            f'spec.names.listKind: Invalid value: "foo-": may have mixed case, but should otherwise match: {DNS1035}',
            f'spec.names.shortNames[0]: Invalid value: "a b": {DNS1035}',
            'spec.names.listKind: Invalid value: "foo-": kind and listKind may not be the same',
            f'spec.names.categories[0]: Invalid value: "A": {DNS1035}',
        ],
        id="bad names",
    ),
    pytest.param(
        crd(names={}, metadata={"name": ".example.com"}),
        [
            f'metadata.name: Invalid value: ".example.com": {SUBDOMAIN}',
            "spec.names.plural: Required value",
            "spec.names.singular: Required value",
            "spec.names.kind: Required value",
            "spec.names.listKind: Required value",
        ],
        id="missing names",
    ),
    pytest.param(
        crd(names={"plural": "foos", "kind": "Foo", "listKind": "Foo"}),
        [
            'spec.names.listKind: Invalid value: "Foo": kind and listKind may not be the same',
        ],
        id="kind equals listKind",
    ),
    pytest.param(
        crd([ver("v1"), ver("v1", storage=False)]),
        [
            'spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null},{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must contain unique version names',
        ],
        id="duplicate versions",
    ),
    pytest.param(
        crd([ver("v1"), ver("v2")]),
        [
            'spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null},{"Name":"v2","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version',
            'status.storedVersions: Invalid value: ["v1"]: must have the storage version v2',
        ],
        id="two storage versions",
    ),
    pytest.param(
        crd([ver(storage=False)]),
        [
            'spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version',
            "status.storedVersions: Invalid value: null: must have at least one stored version",
        ],
        id="no storage version",
    ),
    pytest.param(
        crd([]),
        [
            "spec.versions: Invalid value: []: must have exactly one version marked as storage version",
            "status.storedVersions: Invalid value: null: must have at least one stored version",
        ],
        id="empty versions",
    ),
    pytest.param(
        crd([ver("v1"), ver("V2", storage=False, schema={"type": "object", "description": "x"})]),
        [
            f'spec.versions[1].name: Invalid value: "V2": {DNS1035}',
        ],
        id="bad version name",
    ),
    pytest.param(
        crd([ver("V1")]),
        [
            f'spec.versions[0].name: Invalid value: "V1": {DNS1035}',
            f'spec.version: Invalid value: "V1": {DNS1035}',
        ],
        id="bad first version name",
    ),
    pytest.param(
        crd([{"name": "v1", "served": True, "storage": True}]),
        [
            "spec.versions[0].schema.openAPIV3Schema: Required value",
        ],
        id="schema required",
    ),
    pytest.param(
        crd([ver("v1"), {"name": "v2", "served": False, "storage": False}]),
        [
            "spec.versions[1].schema.openAPIV3Schema: Required value",
        ],
        id="schema required in unserved version",
    ),
    pytest.param(
        crd([ver(deprecationWarning="x<y")]),
        [
            'spec.versions[0].deprecationWarning: Invalid value: "x\\u003cy": can only be set for deprecated versions',
        ],
        id="deprecationWarning on a version not deprecated",
    ),
    pytest.param(
        crd([ver(deprecated=True, deprecationWarning="")]),
        [
            'spec.versions[0].deprecationWarning: Invalid value: "": must not be an empty string',
        ],
        id="empty deprecationWarning",
    ),
    pytest.param(
        crd([ver(deprecated=True, deprecationWarning="ab\nc")]),
        [
            'spec.versions[0].deprecationWarning: Invalid value: "ab\\nc": must only contain printable UTF-8 characters; non-printable character found at index 2',
        ],
        id="deprecationWarning with a newline",
    ),
    pytest.param(
        crd([ver(deprecated=True, deprecationWarning="x" * 257)]),
        [
            'spec.versions[0].deprecationWarning: Invalid value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": must be <= 256 characters long',
        ],
        id="deprecationWarning too long",
    ),
    pytest.param(
        crd([ver(deprecated=True, deprecationWarning="x" * 256)]),
        [],
        id="deprecationWarning of 256 UTF-8 bytes",
    ),
    pytest.param(
        crd(
            [
                ver(
                    subresources={
                        "scale": {
                            "specReplicasPath": "spec.r",
                            "statusReplicasPath": ".foo.r",
                            "labelSelectorPath": ".x",
                        }
                    }
                )
            ]
        ),
        [
            'spec.subresources.scale.specReplicasPath: Invalid value: "spec.r": must be a simple json path starting with .',
            'spec.subresources.scale.statusReplicasPath: Invalid value: ".foo.r": should be a json path under .status',
            'spec.subresources.scale.labelSelectorPath: Invalid value: ".x": should be a json path under either .spec or .status',
        ],
        id="scale paths",
    ),
    pytest.param(
        crd([ver(subresources={"scale": {}})]),
        [
            "spec.subresources.scale.specReplicasPath: Required value",
            "spec.subresources.scale.statusReplicasPath: Required value",
        ],
        id="scale paths missing",
    ),
    pytest.param(
        crd(
            [
                ver(
                    additionalPrinterColumns=[
                        {"name": "", "type": "bogus", "format": "x", "jsonPath": "a"},
                        {"name": "n", "type": "", "jsonPath": ""},
                    ]
                )
            ]
        ),
        [
            "spec.additionalPrinterColumns[0].name: Required value",
            'spec.additionalPrinterColumns[0].type: Invalid value: "bogus": must be one of boolean,date,integer,number,string',
            'spec.additionalPrinterColumns[0].format: Invalid value: "x": must be one of byte,date,date-time,double,float,int32,int64,password',
            'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "a": must be a simple json path starting with .',
            "spec.additionalPrinterColumns[1].type: Required value: must be one of boolean,date,integer,number,string",
            "spec.additionalPrinterColumns[1].JSONPath: Required value",
        ],
        id="printer columns",
    ),
    pytest.param(
        crd(
            [
                ver(
                    "v1",
                    additionalPrinterColumns=[{"name": "a", "type": "string", "jsonPath": "a"}],
                ),
                ver(
                    "v2",
                    storage=False,
                    additionalPrinterColumns=[{"name": "b", "type": "strin", "jsonPath": ".b"}],
                ),
            ]
        ),
        [
            'spec.versions[0].additionalPrinterColumns[0].JSONPath: Invalid value: "a": must be a simple json path starting with .',
            'spec.versions[1].additionalPrinterColumns[0].type: Invalid value: "strin": must be one of boolean,date,integer,number,string',
        ],
        id="printer columns per version",
    ),
    pytest.param(
        crd(
            [
                ver(
                    additionalPrinterColumns=[
                        {"name": f, "type": "string", "format": f, "jsonPath": ".a"}
                        for f in (
                            "int32",
                            "int64",
                            "float",
                            "double",
                            "byte",
                            "date",
                            "date-time",
                            "password",
                        )
                    ]
                )
            ]
        ),
        [],
        id="valid printer column formats",
    ),
    pytest.param(
        crd([ver(schema={"type": "object", "minProperties": 1}, subresources={"status": {}})]),
        [
            'spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":1,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
        ],
        id="root keywords with status",
    ),
    pytest.param(
        crd(
            [
                ver(
                    schema={
                        "type": "object",
                        "description": "d",
                        "required": ["spec"],
                        "properties": {"spec": {"type": "object"}},
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                    subresources={"status": {}},
                )
            ]
        ),
        [],
        id="allowed root keywords with status",
    ),
    pytest.param(
        crd(
            [
                ver(
                    "v1", subresources={"status": {}}, schema={"type": "object", "minProperties": 1}
                ),
                ver("v2", storage=False, schema={"type": "object", "minProperties": 1}),
            ]
        ),
        [
            'spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":1,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
        ],
        id="root status check per version",
    ),
    pytest.param(
        crd(
            [
                ver(
                    "v1",
                    storage=False,
                    schema={"type": "object", "description": "a"},
                    subresources={
                        "status": {},
                        "scale": {"specReplicasPath": ".spec.r", "statusReplicasPath": ".status.r"},
                    },
                    additionalPrinterColumns=[{"name": "a", "type": "string", "jsonPath": ".a"}],
                    deprecated=True,
                    deprecationWarning="w",
                ),
                ver(
                    "v2",
                    storage=False,
                    schema={
                        "type": "object",
                        "description": "b",
                        "x-kubernetes-validations": [
                            {"rule": "true", "reason": "FieldValueInvalid"}
                        ],
                    },
                ),
            ]
        ),
        [
            'spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":false,"Deprecated":true,"DeprecationWarning":"w","Schema":{"OpenAPIV3Schema":{"ID":"","Schema":"","Ref":null,"Description":"a","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}},"Subresources":{"Status":{},"Scale":{"SpecReplicasPath":".spec.r","StatusReplicasPath":".status.r","LabelSelectorPath":null}},"AdditionalPrinterColumns":[{"Name":"a","Type":"string","Format":"","Description":"","Priority":0,"JSONPath":".a"}],"SelectableFields":null},{"Name":"v2","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":{"OpenAPIV3Schema":{"ID":"","Schema":"","Ref":null,"Description":"b","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":[{"Rule":"true","Message":"","MessageExpression":"","Reason":"FieldValueInvalid","FieldPath":"","OptionalOldSelf":null}]}},"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version',
            "status.storedVersions: Invalid value: null: must have at least one stored version",
        ],
        id="versions shown as kube's internal structs",
    ),
    pytest.param(
        crd(preserveUnknownFields=True),
        [
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ],
        id="preserveUnknownFields true",
    ),
    pytest.param(
        crd(
            [
                ver("v1", schema=obj(("a", {"type": "string", "default": "x"}))),
                ver("v2", storage=False),
            ],
            preserveUnknownFields=True,
            conversion={
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {"url": "https://example.com"},
                    "conversionReviewVersions": ["v1"],
                },
            },
        ),
        [
            "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
            'spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true',
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ],
        id="preserveUnknownFields true with defaults and webhook",
    ),
    pytest.param(
        crd(group="foo.platform.io", metadata={"name": "foos.foo.platform.io"}),
        [
            'metadata.annotations[api-approved.platform.io]: Required value: protected groups must have approval annotation "api-approved.platform.io", see https://github.com/kubernetes/enhancements/pull/1111',
        ],
        id="approval missing",
    ),
    pytest.param(
        crd(
            group="foo.platform.io",
            metadata={
                "name": "foos.foo.platform.io",
                "annotations": {"api-approved.platform.io": "yes"},
            },
        ),
        [
            'metadata.annotations[api-approved.platform.io]: Invalid value: "yes": protected groups must have approval annotation "api-approved.platform.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111',
        ],
        id="approval invalid",
    ),
    pytest.param(
        crd(
            group="foo.platform.io",
            metadata={
                "name": "foos.foo.platform.io",
                "annotations": {"api-approved.platform.io": "unapproved, testing"},
            },
        ),
        [],
        id="approval bypassed",
    ),
    pytest.param(
        crd(
            group="platform.io",
            metadata={
                "name": "foos.platform.io",
                "annotations": {
                    "api-approved.platform.io": "https://github.com/kubernetes/kubernetes/pull/1"
                },
            },
        ),
        [],
        id="approved",
    ),
    pytest.param(
        crd(
            [
                ver(
                    schema=obj(
                        (
                            "spec",
                            obj(
                                ("color", {"type": "string"}),
                                ("obj", {"type": "object"}),
                                (
                                    "m",
                                    {"type": "object", "additionalProperties": {"type": "string"}},
                                ),
                            ),
                        )
                    ),
                    selectableFields=[
                        {"jsonPath": j}
                        for j in (
                            ".spec.nope",
                            ".spec.obj",
                            ".spec.color",
                            ".spec['color']",
                            "",
                            "spec",
                            ".metadata.name",
                            ".spec.m.x",
                            ".spec.color",
                        )
                    ],
                )
            ]
        ),
        [
            'spec.selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
            'spec.selectableFields[1].jsonPath: Invalid value: ".spec.obj": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
            "spec.selectableFields[3].jsonPath: Invalid value: \".spec['color']\": is an invalid path: array notation is not allowed",
            "spec.selectableFields[4].jsonPath: Required value",
            'spec.selectableFields[5].jsonPath: Invalid value: "spec": is an invalid path: expected [ or . but got: spec',
            'spec.selectableFields[6].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer to a valid field',
            'spec.selectableFields[8].jsonPath: Duplicate value: ".spec.color"',
        ],
        id="selectable fields",
    ),
    pytest.param(
        crd(
            [
                ver(
                    schema=obj(("metadata", obj(("name", {"type": "string"})))),
                    selectableFields=[{"jsonPath": ".metadata.name"}],
                )
            ]
        ),
        [
            'spec.selectableFields[0].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata',
        ],
        id="selectable fields in metadata",
    ),
    pytest.param(
        crd(
            [
                ver(
                    schema=obj(("spec", obj(*[(f"f{i}", {"type": "string"}) for i in range(10)]))),
                    selectableFields=[{"jsonPath": f".spec.f{i}"} for i in range(10)],
                )
            ]
        ),
        [
            "spec.selectableFields: Too many: 10: must have at most 8 items",
        ],
        id="too many selectable fields",
    ),
    pytest.param(
        crd(
            [
                ver(
                    "v1",
                    schema=obj(("spec", obj(("a", {"type": "string"})))),
                    selectableFields=[{"jsonPath": ".spec.a"}],
                ),
                ver(
                    "v2",
                    storage=False,
                    schema=obj(("spec", obj(("a", {"type": "string"})))),
                    selectableFields=[{"jsonPath": ".spec.b"}],
                ),
            ]
        ),
        [
            'spec.versions[0].selectableFields: Invalid value: "": may only be set when `version.schema.openAPIV3Schema` is not included',
            'spec.versions[1].selectableFields: Invalid value: "": may only be set when `version.schema.openAPIV3Schema` is not included',
        ],
        id="selectable fields of versions with one schema",
    ),
    pytest.param(
        crd(
            [
                ver(
                    "v1",
                    schema=obj(("spec", obj(("a", {"type": "string"})))),
                    selectableFields=[{"jsonPath": ".spec.a"}],
                ),
                ver(
                    "v2",
                    storage=False,
                    schema=obj(("spec", obj(("b", {"type": "string"})))),
                    selectableFields=[{"jsonPath": ".spec.a"}],
                ),
            ]
        ),
        [
            'spec.selectableFields: Invalid value: "": may only be set when validations.schema is included',
        ],
        id="selectable fields per version",
    ),
]


@pytest.mark.parametrize(("definition", "expected"), CASES)
def test_create(definition: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(definition) == expected
