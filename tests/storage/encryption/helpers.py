"""Shared by the encryption tests: configuration files and keys."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import yaml

API_VERSION = "apiserver.config.platform.io/v1"


def key(size: int = 32) -> str:
    return base64.b64encode(os.urandom(size)).decode()


def keys(*names: str, size: int = 32) -> dict[str, Any]:
    return {"keys": [{"name": n, "secret": key(size)} for n in names]}


def write_config(path: Path, *rules: dict[str, Any]) -> str:
    doc = {"apiVersion": API_VERSION, "kind": "EncryptionConfiguration", "resources": list(rules)}
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def rule(resources: list[str], *providers: dict[str, Any]) -> dict[str, Any]:
    return {"resources": resources, "providers": list(providers)}
