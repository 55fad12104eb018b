"""kube's default pull policy from an image reference (each as kube-apiserver v1.36
defaulted a pod's container and image volume, 2026-12-07)."""

from __future__ import annotations

import pytest

from platform_api.registry.imagerefs import pull_policy, tag_and_digest

SHA = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.k8s.io/pause:3.9", "IfNotPresent"),
        ("localhost:5000/x", "Always"),
        ("127.0.0.1:5000/x:latest", "Always"),
        ("index.docker.io/x", "Always"),
        ("Docker.io/x", "Always"),
        ("my_image", "Always"),
        ("a--b", "Always"),
        ("a@" + SHA, "IfNotPresent"),  # a digest and no tag: no "latest"
        ("a:latest@" + SHA, "Always"),
        ("[::1]:5000/a:b", "IfNotPresent"),
        ("x.y/z:LATEST", "IfNotPresent"),
        # references ParseNormalizedNamed refuses have no tag: IfNotPresent
        ("25%", "IfNotPresent"),
        ("Nginx", "IfNotPresent"),
        ("docker.io/Library/x", "IfNotPresent"),
        ("a___b", "IfNotPresent"),
        ("-x", "IfNotPresent"),
        ("x:y:z", "IfNotPresent"),
        ("x:" + "t" * 129, "IfNotPresent"),
        ("a" * 64, "IfNotPresent"),  # an image id, not a name
        ("a" * 300, "IfNotPresent"),  # a name over 255 characters
        ("a@sha256:abc", "IfNotPresent"),
        ("a@sha256:" + "A" * 64, "IfNotPresent"),
        ("a@md5:" + "a" * 32, "IfNotPresent"),
        ("", "IfNotPresent"),
    ],
)
def test_pull_policy(image: str, policy: str) -> None:
    assert pull_policy(image) == policy


def test_tag_and_digest() -> None:
    assert tag_and_digest("ubuntu:22.04@" + SHA) == ("22.04", SHA)
    assert tag_and_digest("x/y/z") == ("latest", "")
    assert tag_and_digest("25%") is None
