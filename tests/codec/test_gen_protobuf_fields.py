"""The field-table generator, on a small upstream-shaped tree, and the committed table."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType

from platform_api.codec import protobuf_fields

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts/gen_protobuf_fields.py"

PROTO = """
syntax = "proto2";

package k8s.io.api.widgets.v1;

import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";

// Widget is a thing.
message Widget {
  // Standard metadata.
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;

  optional WidgetSpec spec = 2;
}

message WidgetList {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;

  repeated Widget items = 2;
}

message WidgetSpec {
  optional string uID = 1;

  optional int32 replicas = 2;

  map<string, Tags> tags = 3;

  repeated string names = 4;

  optional Common common = 6;

  optional bool paused = 5;
}

message Common {
  optional string color = 1;
}

message Tags {
  // items, if empty, will result in an empty slice

  repeated string items = 1;
}
"""

TYPES = """
package v1

import (
	"k8s.io/apimachinery/pkg/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Widget struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec WidgetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

type WidgetSpec struct {
	UID types.UID `json:"uid,omitempty" protobuf:"bytes,1,opt,name=uID"`
	Paused bool `json:"paused,omitempty" protobuf:"varint,5,opt,name=paused"`
	// Replicas is a pointer.
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	Common `json:",inline" protobuf:"bytes,6,opt,name=common"`
	Tags map[string]Tags `json:"tags,omitzero" protobuf:"bytes,3,rep,name=tags"`
	Names []Name `json:"names" protobuf:"bytes,4,rep,name=names"`
}

// Name is a named string type.
type Name string

type Common struct {
	Color string `json:"color,omitempty" protobuf:"bytes,1,opt,name=color"`
}

// +protobuf.nullable=true
type Tags []string
"""

REGISTER = """
package v1

const GroupName = "widgets.example.io"

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Widget{},
		&WidgetList{},
		&metav1.Status{},
	)
	return nil
}
"""

META_PROTO = """
syntax = "proto2";

package k8s.io.apimachinery.pkg.apis.meta.v1;

message ObjectMeta {
  optional string name = 1;
}

message ListMeta {
  optional string resourceVersion = 2;
}

message Status {
  optional ListMeta metadata = 1;
}

message DeleteOptions {
  repeated string dryRun = 5;
}

message WatchEvent {
  optional string type = 1;
}
"""

META_REGISTER = """
package v1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

const GroupName = "meta.k8s.io"

const WatchEventKind = "WatchEvent"

var optionsTypes = []runtime.Object{
	&DeleteOptions{},
}

func AddToGroupVersion(scheme *runtime.Scheme, groupVersion schema.GroupVersion) {
	scheme.AddKnownTypeWithName(groupVersion.WithKind(WatchEventKind), &WatchEvent{})
	scheme.AddKnownTypes(groupVersion, optionsTypes...)
	scheme.AddUnversionedTypes(Unversioned,
		&Status{},
	)
}
"""


def write(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_protobuf_fields", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def generate(tmp_path: pathlib.Path) -> tuple[str, dict[str, object]]:
    api, machinery, ext = tmp_path / "api", tmp_path / "apimachinery", tmp_path / "ext"
    metav1 = "pkg/apis/meta/v1"
    write(
        api,
        {
            "widgets/v1/generated.proto": PROTO,
            "widgets/v1/types.go": TYPES,
            "widgets/v1/register.go": REGISTER.replace(
                "package v1\n",
                'package v1\n\nimport (\n\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"\n)\n',
            ),
            "widgets/v1/doc.go": "// +groupName=widgets.example.io\npackage v1\n",
        },
    )
    write(
        machinery,
        {
            f"{metav1}/generated.proto": META_PROTO,
            f"{metav1}/register.go": META_REGISTER,
            f"{metav1}/doc.go": "// +groupName=meta.k8s.io\npackage v1\n",
            "pkg/types/uid.go": "package types\n\n// UID is a type.\ntype UID string\n",
        },
    )
    write(
        ext,
        {"go.mod": "module k8s.io/apiextensions-apiserver\n\nrequire (\n\tk8s.io/api v9.9.9\n)\n"},
    )
    out = tmp_path / "fields.json"
    argv = [str(api), str(machinery), str(ext), "--out", str(out)]
    assert load_generator().main(argv) == 0
    text = out.read_text()
    version, messages, kinds, wrappers, go_types, go_names = protobuf_fields.load(text.encode())
    table = {
        "UPSTREAM_VERSION": version,
        "MESSAGES": messages,
        "KINDS": kinds,
        "LIST_WRAPPERS": wrappers,
        "GO_TYPES": go_types,
        "GO_NAMES": go_names,
    }
    return text, table


def test_generator_output(tmp_path: pathlib.Path) -> None:
    text, table = generate(tmp_path)
    assert table["UPSTREAM_VERSION"] == "v9.9.9"
    messages = table["MESSAGES"]
    assert isinstance(messages, dict)
    # Go struct order; JSON names from Go; pointer, omitempty, omitzero and inline flags.
    assert messages["k8s.io.api.widgets.v1.WidgetSpec"] == (
        ("uid", 1, "string", 4, ""),
        ("paused", 5, "bool", 4, ""),
        ("replicas", 2, "int32", 6, ""),
        ("", 6, "message", 16, "Common"),
        ("tags", 3, "map", 8, "string,Tags"),
        ("names", 4, "string", 1, ""),
    )
    assert messages["k8s.io.api.widgets.v1.Widget"][0] == (
        "metadata",
        1,
        "message",
        4,
        "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    )
    assert table["KINDS"] == {
        ("widgets.example.io", "v1", "Widget"): "k8s.io.api.widgets.v1.Widget",
        ("widgets.example.io", "v1", "WidgetList"): "k8s.io.api.widgets.v1.WidgetList",
        ("widgets.example.io", "v1", "Status"): "k8s.io.apimachinery.pkg.apis.meta.v1.Status",
        ("*", "*", "WatchEvent"): "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent",
        ("*", "*", "DeleteOptions"): "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        ("", "v1", "Status"): "k8s.io.apimachinery.pkg.apis.meta.v1.Status",
    }
    assert table["LIST_WRAPPERS"] == frozenset({"k8s.io.api.widgets.v1.Tags"})
    # Fields of named non-struct types, as Go's JSON decoder names them; Tags is one too.
    assert table["GO_TYPES"] == {
        "k8s.io.api.widgets.v1.WidgetSpec": {
            "names": "[]v1.Name",
            "tags": "map[string]v1.Tags",
            "uid": "types.UID",
        }
    }
    # Go's field names where they are not the JSON name capitalized (gogo's errors name them)
    assert table["GO_NAMES"] == {
        "k8s.io.api.widgets.v1.Widget": {"1": "ObjectMeta"},
        "k8s.io.api.widgets.v1.WidgetSpec": {"1": "UID", "6": "Common"},
    }
    assert "//" not in text and "#" not in text  # comment-free data
    assert generate(tmp_path)[0] == text  # deterministic


def test_committed_table() -> None:
    assert protobuf_fields.UPSTREAM_VERSION == "v0.36.3"
    assert len(protobuf_fields.MESSAGES) > 1000
    pod = {row[0]: row for row in protobuf_fields.MESSAGES["k8s.io.api.core.v1.Pod"]}
    assert pod["spec"] == ("spec", 2, "message", 4, "PodSpec")
    assert protobuf_fields.KINDS[("apps", "v1", "Deployment")] == "k8s.io.api.apps.v1.Deployment"
    service = protobuf_fields.GO_TYPES["k8s.io.api.core.v1.ServiceSpec"]
    assert (service["type"], service["ipFamilies"]) == ("v1.ServiceType", "[]v1.IPFamily")
    assert protobuf_fields.GO_NAMES["k8s.io.api.core.v1.PodSpec"]["6"] == "DNSPolicy"
