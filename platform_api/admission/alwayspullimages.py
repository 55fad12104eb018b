"""AlwaysPullImages: every container pulls its image on start (kube's plugin).

So that a pod can only run an image its pull secrets give access to, even when another
pod already brought it to the node.  Pod creates, and updates that bring a new image,
get ``imagePullPolicy: Always`` on every container (and image volume); the validating
phase refuses any other policy a later mutation left.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from platform_api import errors
from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext
from platform_api.validation import field

Obj = dict[str, Any]
ALWAYS = "Always"
CONTAINER_KEYS = ("initContainers", "containers", "ephemeralContainers")


def containers(spec: Obj) -> Iterator[tuple[str, Obj]]:
    """Every container with its path (kube's VisitContainersWithPath order)."""
    for key in CONTAINER_KEYS:
        for i, container in enumerate(spec.get(key) or []):
            yield f"spec.{key}[{i}]", container


def _images(pod: Obj | None) -> set[str]:
    return {c.get("image", "") for _, c in containers((pod or {}).get("spec") or {})}


class AlwaysPullImages:
    name = "AlwaysPullImages"

    @staticmethod
    def _ignored(attrs: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        rt = attrs.resource
        if obj is None or attrs.subresource or (rt.group, rt.plural) != ("", "pods"):
            return True
        if attrs.operation == "UPDATE":
            return _images(obj) <= _images(old)  # no new image: nothing to pull
        return attrs.operation != "CREATE"

    def admit(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if self._ignored(attrs, obj, old):
            return
        assert obj is not None
        spec = obj.setdefault("spec", {})
        for _, container in containers(spec):
            container["imagePullPolicy"] = ALWAYS
        for volume in spec.get("volumes") or []:
            if volume.get("image") is not None:
                volume["image"]["pullPolicy"] = ALWAYS

    def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        if self._ignored(attrs, obj, old):
            return
        assert obj is not None
        spec = obj.get("spec") or {}
        messages = [
            str(
                field.not_supported(f"{at}.imagePullPolicy", c.get("imagePullPolicy", ""), [ALWAYS])
            )
            for at, c in containers(spec)
            if c.get("imagePullPolicy") != ALWAYS
        ]
        for i, volume in enumerate(spec.get("volumes") or []):
            image = volume.get("image")
            if image is not None and image.get("pullPolicy") != ALWAYS:
                at = f"spec.volumes[{i}].image.pullPolicy"
                messages.append(str(field.not_supported(at, image.get("pullPolicy", ""), [ALWAYS])))
        if messages:
            texts = [forbidden(attrs, obj, m).message for m in messages]
            text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
            # kube aggregates the Forbidden errors: a plain error, a 500 without a reason.
            raise errors.StatusError(500, "", text)


def build(ctx: PluginContext) -> AlwaysPullImages:
    return AlwaysPullImages()
