"""Body decoding against the schemas: pruning, duplicates, Go's type errors, canonical times."""

from __future__ import annotations

import copy

import orjson
import pytest

from platform_api.codec import BodyError, parse_json, parse_yaml
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.decoding import Decoder
from platform_api.scheme.gonames import DecodeError

SCHEME = builtin_scheme()


def decode(resource: tuple[str, str, str], body: bytes, yaml: bool = False) -> object:
    rt = SCHEME.lookup(*resource)
    assert rt is not None
    obj, dups = parse_yaml(body) if yaml else parse_json(body)
    return Decoder(SCHEME.schemas, dups).decode(obj, rt.definition)


DEPLOYMENTS = ("apps", "v1", "deployments")


def test_unknown_and_duplicate_fields_are_reported_and_pruned() -> None:
    body = b"""{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"a":"1","a":"2"}},
      "spec":{"replicas":2,"bogus":true,"template":{"spec":{"containers":[{"name":"c","image":"i","x":1}]}}}}"""
    decoded = decode(DEPLOYMENTS, body)
    assert decoded.unknown == ["spec.bogus", "spec.template.spec.containers[0].x"]
    assert decoded.duplicates == ["metadata.labels.a"]
    assert decoded.obj["metadata"]["labels"] == {"a": "2"}
    assert "bogus" not in decoded.obj["spec"]
    assert decoded.strict_errors() == [
        'duplicate field "metadata.labels.a"',
        'unknown field "spec.bogus"',
        'unknown field "spec.template.spec.containers[0].x"',
    ]


def test_an_applied_configuration_keeps_its_nulls() -> None:
    """Go's decoder leaves a null field zero; the field manager reads an applied
    configuration's nulls (they claim and clear), so its decoding keeps them."""
    body = b'{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":null},"spec":{"replicas":null,"template":{"spec":{"containers":[{"name":"c","image":null}]}}}}'
    rt = SCHEME.lookup(*DEPLOYMENTS)
    assert rt is not None
    obj, dups = parse_json(body)
    kept = Decoder(SCHEME.schemas, dups, keep_nulls=True).decode(obj, rt.definition).obj
    assert kept["metadata"] == {"name": "d", "labels": None}
    assert kept["spec"]["replicas"] is None
    assert kept["spec"]["template"]["spec"]["containers"] == [{"name": "c", "image": None}]
    plain = decode(DEPLOYMENTS, body)
    assert plain.obj["metadata"] == {"name": "d"} and "replicas" not in plain.obj["spec"]


def test_an_applied_configuration_keeps_its_quantities_as_written() -> None:
    """The field manager compares an applied configuration as written ("1024Mi" is not
    "1Gi"); a stored object's quantities are canonical.  Either way they are checked."""
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {"name": "c", "resources": {"requests": {"memory": "1024Mi", "cpu": "0.5"}}}
            ]
        },
    }
    rt = SCHEME.lookup("", "v1", "pods")
    assert rt is not None
    written = Decoder(SCHEME.schemas, keep_nulls=True, as_written=True)
    kept = written.decode(copy.deepcopy(obj), rt.definition).obj
    resources = kept["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"memory": "1024Mi", "cpu": "0.5"}}
    stored = Decoder(SCHEME.schemas).decode(copy.deepcopy(obj), rt.definition).obj
    resources = stored["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"memory": "1Gi", "cpu": "500m"}}
    obj["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "x"
    with pytest.raises(DecodeError):
        Decoder(SCHEME.schemas, keep_nulls=True, as_written=True).decode(obj, rt.definition)


def test_strict_problems_come_in_the_order_the_body_holds_them() -> None:
    # kube's strict decoder reports as it reads: here the unknown field comes first.
    body = b'{"apiVersion":"v1","kind":"ConfigMap","bogus":1,"data":{"a":"b","a":"c"}}'
    decoded = decode(("", "v1", "configmaps"), body)
    assert decoded.strict_errors() == ['unknown field "bogus"', 'duplicate field "data.a"']


def test_a_repeated_key_is_reported_where_the_repeat_stands() -> None:
    """Upstream's FieldValidation conformance case: the unknown field comes before the
    second ``replicas``, so kube reports it first."""
    body = b"""{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
      "spec":{"unknownField":"foo","replicas":2,"replicas":3,"selector":{}}}"""
    assert decode(DEPLOYMENTS, body).strict_errors() == [
        'unknown field "spec.unknownField"',
        'duplicate field "spec.replicas"',
    ]
    swapped = b'{"spec":{"replicas":2,"replicas":3,"unknownField":"foo"}}'
    assert decode(DEPLOYMENTS, swapped).strict_errors() == [
        'duplicate field "spec.replicas"',
        'unknown field "spec.unknownField"',
    ]


def test_cbor_wording() -> None:
    rt = SCHEME.lookup("apps", "v1", "deployments")
    assert rt is not None
    decoder = Decoder(SCHEME.schemas, cbor=True)
    with pytest.raises(DecodeError) as caught:
        decoder.decode({"spec": {"replicas": "2"}}, rt.definition)
    assert str(caught.value) == (
        "cbor: cannot unmarshal byte string into Go struct field v1.DeploymentSpec.spec.replicas "
        "of type int32"
    )
    decoded = Decoder(SCHEME.schemas, cbor=True).decode(
        {"apiVersion": "apps/v1", "metadata": {"name": "d", "x": 1}, "y": 2}, rt.definition
    )
    assert decoded.strict_errors() == ["cbor: found unknown field at map element index 1"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'{"spec":{"replicas":"2"}}',
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            b'{"spec":{"replicas":1.5}}',
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            b'{"spec":{"replicas":3000000000}}',
            "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            b'{"spec":"x"}',
            "json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec",
        ),
        (
            b'{"spec":{"template":{"spec":{"containers":["x"]}}}}',
            "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of type v1.Container",
        ),
        (
            b'{"metadata":{"creationTimestamp":"yesterday"}}',
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        ),
    ],
)
def test_type_errors_use_gos_wording(body: bytes, message: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(DEPLOYMENTS, body)
    assert str(caught.value) == message


SERVICES, PODS = ("", "v1", "services"), ("", "v1", "pods")
SECRETS = ("", "v1", "secrets")


@pytest.mark.parametrize(
    ("resource", "body", "message"),
    [  # as kube-apiserver v1.36 answered each (the generated table's goTypes)
        (SERVICES, b'{"spec":{"type":5}}', "ServiceSpec.spec.type of type v1.ServiceType"),
        (
            SERVICES,
            b'{"spec":{"ipFamilies":"IPv4"}}',
            "ServiceSpec.spec.ipFamilies of type []v1.IPFamily",
        ),
        (
            SERVICES,
            b'{"spec":{"ipFamilies":[4]}}',
            "ServiceSpec.spec.ipFamilies of type v1.IPFamily",
        ),
        (SERVICES, b'{"metadata":{"uid":5}}', "ObjectMeta.metadata.uid of type types.UID"),
        # a field promoted from an embedded struct (Rule in RuleWithOperations), 2026-12-07
        (
            ("admissionregistration.platform.io", "v1", "validatingwebhookconfigurations"),
            b'{"webhooks":[{"name":"a.b.c","rules":[{"scope":5}]}]}',
            "RuleWithOperations.webhooks.rules.Rule.scope of type v1.ScopeType",
        ),
        (
            DEPLOYMENTS,
            b'{"spec":{"strategy":{"type":1}}}',
            "DeploymentStrategy.spec.strategy.type of type v1.DeploymentStrategyType",
        ),
        (
            PODS,
            b'{"spec":{"containers":[{"resources":{"limits":"x"}}]}}',
            "ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList",
        ),
        (
            PODS,
            b'{"spec":{"containers":[{"securityContext":{"capabilities":{"add":[1]}}}]}}',
            "Capabilities.spec.containers.securityContext.capabilities.add of type v1.Capability",
        ),
        (
            PODS,
            b'{"spec":{"containers":[{"name":1}]}}',
            "Container.spec.containers.name of type string",
        ),
        # fields promoted from embedded structs: Go's decoder names the struct
        (
            PODS,
            b'{"spec":{"containers":[{"readinessProbe":{"httpGet":5}}]}}',
            "Probe.spec.containers.readinessProbe.ProbeHandler.httpGet of type v1.HTTPGetAction",
        ),
        (
            PODS,
            b'{"spec":{"volumes":[{"name":"v","emptyDir":"x"}]}}',
            "Volume.spec.volumes.VolumeSource.emptyDir of type v1.EmptyDirVolumeSource",
        ),
        (
            PODS,
            b'{"spec":{"containers":[{"env":[{"valueFrom":{"secretKeyRef":{"name":5}}}]}]}}',
            "SecretKeySelector.spec.containers.env.valueFrom.secretKeyRef"
            ".LocalObjectReference.name of type string",
        ),
        # metav1.Time.UnmarshalJSON reads the value into a string first
        (
            SECRETS,
            b'{"metadata":{"creationTimestamp":5}}',
            "number into Go struct field ObjectMeta.metadata.creationTimestamp of type string",
        ),
        (
            SECRETS,
            b'{"metadata":{"managedFields":[{"time":true}]}}',
            "bool into Go struct field ManagedFieldsEntry.metadata.managedFields.time of type string",
        ),
        # time.ParseError quotes control and non-ASCII bytes as \xNN
        (
            SECRETS,
            b'{"metadata":{"creationTimestamp":"\\u2603\\u0001x"}}',
            'parsing time "\\xe2\\x98\\x83\\x01x" as "2006-01-02T15:04:05Z07:00": '
            'cannot parse "\\xe2\\x98\\x83\\x01x" as "2006"',
        ),
        # a field of the kind's own struct (it was "of type string")
        (SECRETS, b'{"type":[1]}', "Secret.type of type v1.SecretType"),
        # IntOrString.UnmarshalJSON reads anything but a string as its int32
        (
            SERVICES,
            b'{"spec":{"ports":[{"port":80,"targetPort":true}]}}',
            "bool into Go struct field ServicePort.spec.ports.targetPort of type int32",
        ),
        (
            SERVICES,
            b'{"spec":{"ports":[{"port":80,"targetPort":1.5}]}}',
            "number 1.5 into Go struct field ServicePort.spec.ports.targetPort of type int32",
        ),
        (
            SERVICES,
            b'{"spec":{"ports":[{"port":80,"targetPort":2147483648}]}}',
            "number 2147483648 into Go struct field ServicePort.spec.ports.targetPort of type int32",
        ),
    ],
)
def test_fields_of_named_types_are_named_as_go_names_them(
    resource: tuple[str, str, str], body: bytes, message: str
) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(resource, body)
    assert str(caught.value).endswith(message)


def test_a_map_of_the_packages_own_structs_names_the_struct_with_its_package() -> None:
    """As kube-apiserver v1.36 answered it, 2026-12-07 (a ResourceSlice: its group is
    served behind a gate, so decoded by its definition)."""
    obj, dups = parse_json(b'{"spec":{"devices":[{"name":"g","attributes":"x"}]}}')
    with pytest.raises(DecodeError) as caught:
        Decoder(SCHEME.schemas, dups).decode(obj, "io.platform.api.resource.v1.ResourceSlice")
    assert str(caught.value).endswith(
        "Device.spec.devices.attributes of type map[v1.QualifiedName]v1.DeviceAttribute"
    )


def test_a_quantity_of_another_json_type_is_parsed_as_text_as_go_does() -> None:
    with pytest.raises(DecodeError) as caught:
        decode(("", "v1", "nodes"), b'{"status":{"capacity":{"cpu":true}}}')
    assert str(caught.value) == (
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_nulls_are_absent_and_times_canonical() -> None:
    body = b'{"metadata":{"name":"x","creationTimestamp":"2024-05-01T10:00:00.123+02:00","labels":null}}'
    decoded = decode(("", "v1", "configmaps"), body)
    assert decoded.obj["metadata"] == {"name": "x", "creationTimestamp": "2024-05-01T08:00:00Z"}


def test_null_items_are_their_types_zero_values() -> None:
    """Go decodes a null list item or map value as its type's zero value (kube then
    refuses a null container for its empty name, as the reference did)."""
    body = b"""{"spec":{"containers":[null,{"name":"c","args":["a",null],
      "resources":{"limits":{"cpu":null}},"ports":[{"containerPort":1,"hostPort":null}]}],
      "tolerations":[null],"readinessGates":null}}"""
    spec = decode(("", "v1", "pods"), body).obj["spec"]
    assert spec["containers"][0] == {}
    assert spec["containers"][1]["args"] == ["a", ""]
    assert spec["containers"][1]["resources"] == {"limits": {"cpu": "0"}}
    assert spec["containers"][1]["ports"] == [{"containerPort": 1}]
    assert spec["tolerations"] == [{}]
    assert "readinessGates" not in spec
    labels = decode(("", "v1", "configmaps"), b'{"data":{"a":null},"binaryData":{"b":null}}').obj
    assert labels == {"data": {"a": ""}, "binaryData": {"b": None}}  # a nil []byte


def test_quantities_int_or_string_and_bytes() -> None:
    body = b"""{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},
      "template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":2,"memory":"1Gi"}}}]}}}}"""
    obj = decode(DEPLOYMENTS, body).obj
    assert obj["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": 1}
    assert obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {
        "cpu": "2",
        "memory": "1Gi",
    }
    with pytest.raises(DecodeError) as caught:
        decode(("", "v1", "secrets"), b'{"data":{"k":"not base64!"}}')
    assert str(caught.value) == "illegal base64 data at input byte 3"


@pytest.mark.parametrize(
    ("text", "position"),
    # Go's StdEncoding positions, as the reference answered each in a Secret's data
    [
        ("A=", 1),
        ("AAAA=", 4),
        ("AA=", 3),
        ("A", 0),
        ("AAAAA", 4),
        ("é", 0),
        ("AA=A", 2),
        ("A\tAA=", 1),
    ],
)
def test_base64_refused_where_go_stops(text: str, position: int) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(("", "v1", "secrets"), orjson.dumps({"data": {"k": text}}))
    assert str(caught.value) == f"illegal base64 data at input byte {position}"


@pytest.mark.parametrize(
    ("text", "stored"),
    # as the reference stores them: line breaks skipped, a last character's unused bits dropped
    [
        ("AA\r\nAA", "AAAA"),
        ("AA\nA=", "AAA="),
        ("AB==", "AA=="),
        ("AAB=", "AAA="),
        ("QQ==", "QQ=="),
    ],
)
def test_base64_is_stored_as_go_writes_it_back(text: str, stored: str) -> None:
    obj = decode(("", "v1", "secrets"), orjson.dumps({"data": {"k": text}})).obj
    assert obj["data"] == {"k": stored}


def test_yaml_bodies_and_their_duplicates() -> None:
    decoded = decode(
        ("", "v1", "configmaps"), b"metadata:\n  name: x\ndata:\n  a: '1'\n  a: '2'\n", yaml=True
    )
    assert decoded.obj["data"] == {"a": "2"} and decoded.duplicates == ["data.a"]


def test_malformed_bodies() -> None:
    with pytest.raises(BodyError) as caught:
        parse_json(b'{"a":')
    assert str(caught.value) == "unexpected end of JSON input"
    with pytest.raises(BodyError):
        parse_json(b'{"a": NaN}')
    with pytest.raises(BodyError):
        parse_yaml(b"a: [")


CONFIGMAPS, SECRETS = ("", "v1", "configmaps"), ("", "v1", "secrets")


@pytest.mark.parametrize(
    ("resource", "body", "message"),
    [  # as kube-apiserver v1.36 answered each (reference, 2026-11-30)
        (SECRETS, b'{"data":"zz"}', "Secret.data of type map[string][]uint8"),
        (SECRETS, b'{"data":{"a":1}}', "number into Go struct field Secret.data of type []uint8"),
        (CONFIGMAPS, b'{"binaryData":{"a":[256]}}', "number 256 into Go struct field "),
        (CONFIGMAPS, b'{"binaryData":{"a":["x"]}}', "string into Go struct field "),
        (CONFIGMAPS, b'{"binaryData":{"a":true}}', "ConfigMap.binaryData of type []uint8"),
    ],
)
def test_bytes_refused_as_go_refuses_them(
    resource: tuple[str, str, str], body: bytes, message: str
) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(resource, body)
    assert message in str(caught.value)


def test_bytes_may_come_as_an_array_of_numbers_as_go_reads_a_slice() -> None:
    """Go's ``[]byte`` is a slice: a JSON array of numbers (null: 0) decodes into it."""
    body = b'{"metadata":{"name":"b"},"binaryData":{"a":[1,2,null],"b":[]}}'
    decoded = decode(CONFIGMAPS, body)
    assert decoded.obj["binaryData"] == {"a": "AQIA", "b": ""}


def test_fields_v1_takes_any_json_as_kube_does() -> None:
    """FieldsV1.UnmarshalJSON keeps whatever JSON it is given; the field manager then
    passes over entries it cannot read (a PUT of such an object is 200 in kube)."""
    body = b'{"metadata":{"name":"x","managedFields":[{"manager":"m","fieldsV1":"junk"}]}}'
    decoded = decode(SECRETS, body)
    assert decoded.obj["metadata"]["managedFields"][0]["fieldsV1"] == "junk"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # a plain mismatch is saved and decoding goes on: an unmarshaler's error wins
        (
            b'{"metadata":{"annotations":5},"spec":{"containers":[{"resources":'
            b'{"limits":{"cpu":"x"}}}]}}',
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            b'{"spec":{"nodeSelector":5,"containers":[{"readinessProbe":'
            b'{"httpGet":{"port":[]}}}]}}',
            "json: cannot unmarshal array into Go struct field HTTPGetAction.spec.containers"
            ".readinessProbe.ProbeHandler.httpGet.port of type int32",
        ),
        # else the first plain mismatch is the error, once everything is read
        (
            b'{"metadata":{"annotations":5},"spec":{"nodeSelector":5}}',
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations"
            " of type map[string]string",
        ),
    ],
)
def test_an_unmarshalers_error_outranks_an_earlier_type_mismatch(body: bytes, message: str) -> None:
    """Go's decoder (and kube's fork of it) saves the first plain type mismatch and goes
    on; an UnmarshalJSON error ends the decode and is reported instead (recorded from
    kube with the same bodies)."""
    with pytest.raises(DecodeError) as caught:
        decode(PODS, body)
    assert str(caught.value) == message


CRDS = ("apiextensions.platform.io", "v1", "customresourcedefinitions")


def crd_body(schema: str) -> bytes:
    version = '{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":%s}}'
    return b'{"spec":{"versions":[%s]}}' % (version % schema).encode()


def test_schema_items_that_are_neither_a_schema_nor_a_list_are_no_items() -> None:
    """JSONSchemaPropsOrArray reads only an object or an array (validation then says
    the items are required; recorded from kube)."""
    decoded = decode(CRDS, crd_body('{"type":"array","items":"x"}'))
    version = decoded.obj["spec"]["versions"][0]
    assert version["schema"]["openAPIV3Schema"] == {"type": "array"}


@pytest.mark.parametrize(
    "schema",
    [
        '{"properties":{"a":{"items":[{"type":"string"},{"maxLength":"x"}]}}}',
        # its own json.Unmarshal's error ends the decode: an earlier mismatch is not it
        '{"properties":{"b":{"type":7},"a":{"items":{"maxLength":"x"}}}}',
    ],
)
def test_a_mismatch_inside_schema_items_is_the_error(schema: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(CRDS, crd_body(schema))
    assert str(caught.value) == (
        "json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions."
        "schema.openAPIV3Schema.properties.items.maxLength of type int64"
    )


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        # JSONSchemaPropsOrBool reads a boolean or an object, and refuses anything else
        ('{"additionalProperties":[[1],[2],[]]}', "boolean or JSON schema expected"),
        ('{"additionalProperties":"x"}', "boolean or JSON schema expected"),
        ('{"additionalItems":5}', "boolean or JSON schema expected"),
        (
            '{"additionalProperties":{"type":5}}',
            "json: cannot unmarshal number into Go struct field JSONSchemaProps.spec.versions."
            "schema.openAPIV3Schema.additionalProperties.type of type string",
        ),
        # JSONSchemaPropsOrStringArray: its array is strings
        (
            '{"dependencies":{"a":["b",1]}}',
            "json: cannot unmarshal number into Go struct field JSONSchemaProps.spec.versions."
            "schema.openAPIV3Schema.dependencies of type string",
        ),
        (
            '{"dependencies":{"a":{"type":5}}}',
            "json: cannot unmarshal number into Go struct field JSONSchemaProps.spec.versions."
            "schema.openAPIV3Schema.dependencies.type of type string",
        ),
    ],
)
def test_schema_or_bool_and_or_string_array_read_as_their_unmarshalers(
    schema: str, message: str
) -> None:
    """Found by the OpenAPI fuzzing (these were 500s); recorded from kube-apiserver v1.36."""
    with pytest.raises(DecodeError) as caught:
        decode(CRDS, crd_body(schema))
    assert str(caught.value) == message


def test_schema_dependencies_neither_a_schema_nor_strings_are_no_value() -> None:
    """kube's validation then forbids dependencies (it decoded them as nothing)."""
    decoded = decode(CRDS, crd_body('{"additionalProperties":true,"dependencies":{"a":"x"}}'))
    schema = decoded.obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema == {"additionalProperties": True, "dependencies": {"a": None}}
