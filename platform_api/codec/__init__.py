"""Every wire format the server speaks: JSON and YAML (``text``; YAML answers in
``goyaml``; objects are written as JSON by ``gotext.object_json``), Protobuf, CBOR.

JSON and YAML are imported from here; each format lives in its own module.
"""

from platform_api.codec.bounds import DepthError
from platform_api.codec.goyaml import UnwritableYAML, yaml_dumps
from platform_api.codec.text import (
    BodyError,
    Duplicates,
    duplicate_key_lines,
    loads,
    parse_json,
    parse_yaml,
)

__all__ = [
    "BodyError",
    "DepthError",
    "Duplicates",
    "UnwritableYAML",
    "duplicate_key_lines",
    "loads",
    "parse_json",
    "parse_yaml",
    "yaml_dumps",
]
