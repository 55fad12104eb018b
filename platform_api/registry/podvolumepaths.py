"""kube's warnings of volume items whose paths collide (``warningsForOverlappingVirtualPaths``).

Two items of one ConfigMap, Secret or downward API volume that write the same file, or
one inside the other's directory, and the sources of a projected volume that do the same;
a projected source that names nothing.  Part of the pod warnings (``podwarnings``).
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import quote

Obj = dict[str, Any]


def overlapping_paths(volumes: list[Any]) -> list[str]:
    """warningsForOverlappingVirtualPaths: two items of one volume writing the same
    file, or one inside the other's directory."""
    warnings = []
    for volume in volumes:
        name = quote(volume.get("name") or "")
        for kind, label in (("configMap", "ConfigMap"), ("secret", "Secret")):
            source = volume.get(kind)
            if source is not None and source.get("items") is not None:
                ref = source.get("name" if kind == "configMap" else "secretName") or ""
                for body in _overlaps(_paths(source["items"], "")):
                    warnings.append(
                        f"volume {name} ({label} {quote(ref)}): overlapping paths: {body}"
                    )
        downward = volume.get("downwardAPI")
        if downward is not None and downward.get("items") is not None:
            for body in _overlaps(_paths(downward["items"], "")):
                warnings.append(f"volume {name} (DownwardAPI): overlapping paths: {body}")
        if volume.get("projected") is not None:
            warnings += _projected(volume["projected"].get("sources") or [], name)
    return warnings


Path = tuple[str, str]  # (path, where it came from)


def _paths(items: list[Any], source: str) -> list[Path]:
    return [((item or {}).get("path") or "", source) for item in items]


def _projected(sources: list[Any], name: str) -> list[str]:
    warnings = []
    seen: list[Path] = []
    for source in sources:
        if not source:
            warnings.append(f"volume {name} (Projected) has no sources provided")
            continue
        for written, origin in _source_paths(source):
            path = (written.rstrip("/"), origin)
            warnings += [
                f"volume {name} (Projected): overlapping paths: {_show(path)} with {_show(c)}"
                for c in _collisions(seen, path)
            ]
            seen.append(path)
    return warnings


def _source_paths(source: Obj) -> list[Path]:
    """The paths one projected source writes, as kube's switch takes the first kind."""
    for kind, label, key in (("configMap", "ConfigMap", "name"), ("secret", "Secret", "name")):
        part = source.get(kind)
        if part is not None and part.get("items") is not None:
            return _paths(part["items"], f"{label} {quote(part.get(key) or '')}")
    downward = source.get("downwardAPI")
    if downward is not None and downward.get("items") is not None:
        return _paths(downward["items"], "DownwardAPI")
    token = source.get("serviceAccountToken")
    if token is not None:
        return [(token.get("path") or "", "ServiceAccountToken")]
    bundle = source.get("clusterTrustBundle")
    if bundle is not None:
        bundle_name = (
            bundle.get("name") if bundle.get("name") is not None else bundle.get("signerName")
        )
        return [(bundle.get("path") or "", f"ClusterTrustBundle {quote(bundle_name or '')}")]
    certificate = source.get("podCertificate")
    if certificate is not None:
        return [
            (certificate[key], label)
            for key, label in (
                ("certificateChainPath", "PodCertificate chain"),
                ("keyPath", "PodCertificate key"),
                ("credentialBundlePath", "PodCertificate credential bundle"),
            )
            if certificate.get(key)
        ]
    return []


def _overlaps(paths: list[Path]) -> list[str]:
    """checkVolumeMappingForOverlap: each path against those before it."""
    seen: list[Path] = []
    out = []
    for written, origin in paths:
        path = (written.rstrip("/"), origin)
        out += [f"{_show(path)} with {_show(c)}" for c in _collisions(seen, path)]
        seen.append(path)
    return out


def _collisions(seen: list[Path], needle: Path) -> list[Path]:
    if not needle[0]:
        return []
    mine = needle[0] + "/"
    return [
        item
        for item in seen
        if item[0]
        and (item == needle or (item[0] + "/").startswith(mine) or mine.startswith(item[0] + "/"))
    ]


def _show(path: Path) -> str:
    return f"{quote(path[0])} ({path[1]})" if path[1] else quote(path[0])
