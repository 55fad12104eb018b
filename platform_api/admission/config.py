"""``--admission-control-config-file``: kube's AdmissionConfiguration, one entry per plugin.

Each entry names its plugin and holds its settings inline (``configuration``) or in a
file (``path``, relative to the AdmissionConfiguration).  Read once at start; a file that
cannot be read stops the start, as kube's does.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from platform_api.apiserver.flagvalues import ConfigError

API_VERSIONS = ("apiserver.config.platform.io/v1", "apiserver.config.platform.io/v1alpha1")
Obj = dict[str, Any]


def read_yaml(path: str, what: str) -> Obj:
    """One YAML mapping from ``path``; ConfigError naming ``what`` otherwise."""
    try:
        with open(path, "rb") as f:
            data = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"unable to read {what} {path!r}: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{what} {path!r} is not a mapping")
    return data


def load_plugin_settings(path: str) -> dict[str, Obj]:
    """Each plugin's settings by plugin name (an entry without settings maps to {})."""
    config = read_yaml(path, "admission configuration")
    if (
        config.get("kind") != "AdmissionConfiguration"
        or config.get("apiVersion") not in API_VERSIONS
    ):
        raise ConfigError(
            f"{path}: expected an AdmissionConfiguration of {' or '.join(API_VERSIONS)}"
        )
    base = os.path.dirname(os.path.abspath(path))
    out: dict[str, Obj] = {}
    for plugin in config.get("plugins") or ():
        name = str(plugin.get("name", ""))
        settings = plugin.get("configuration")
        if settings is None and plugin.get("path"):
            settings = read_yaml(os.path.join(base, str(plugin["path"])), "plugin configuration")
        out[name] = settings if isinstance(settings, dict) else {}
    return out
