"""Container image references read as kube reads them (``parsers.ParseImageName``, on
the distribution project's ``reference.ParseNormalizedNamed``).

kube defaults a container's (and an image volume's) pull policy from the reference's tag:
``Always`` for ``latest``, which a reference with neither tag nor digest is, else
``IfNotPresent``; a reference that does not parse has no tag, so ``IfNotPresent`` too
(``25%``, ``Nginx``, a digest of the wrong length).
"""

from __future__ import annotations

import re

_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_NAME = rf"(?:{_HOST}(?::[0-9]+)?/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?", re.ASCII)
_IDENTIFIER = re.compile(r"[a-f0-9]{64}")
# go-digest's algorithms and the length of their hex
_DIGEST_HEX = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_MAX = 255
_DEFAULT_DOMAIN = "docker.io"


def tag_and_digest(image: str) -> tuple[str, str] | None:
    """The reference's tag (``latest`` when it has neither tag nor digest) and digest,
    or None when ``ParseNormalizedNamed`` refuses it."""
    if _IDENTIFIER.fullmatch(image):
        return None
    domain, remainder = _split_domain(image)
    repository = remainder.partition(":")[0]
    if repository.lower() != repository:
        return None  # the repository name must be lowercase
    match = _REFERENCE.fullmatch(f"{domain}/{remainder}")
    if match is None or len(match.group(1)) > _NAME_MAX:
        return None
    tag, digest = match.group(2) or "", match.group(3) or ""
    if digest:
        algorithm, _, hex_part = digest.partition(":")
        if _DIGEST_HEX.get(algorithm) != len(hex_part) or hex_part.lower() != hex_part:
            return None
    return (tag or ("latest" if not digest else "")), digest


def _split_domain(name: str) -> tuple[str, str]:
    """distribution's splitDockerDomain: the registry, else Docker Hub (``library/`` for
    an official image's one-part name)."""
    first, slash, rest = name.partition("/")
    if not slash or (
        not any(c in first for c in ".:") and first != "localhost" and first.lower() == first
    ):
        domain, remainder = _DEFAULT_DOMAIN, name
    else:
        domain, remainder = first, rest
    if domain == "index.docker.io":
        domain = _DEFAULT_DOMAIN
    if domain == _DEFAULT_DOMAIN and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


def pull_policy(image: str) -> str:
    """kube's default pull policy for an image (a container's or an image volume's)."""
    parsed = tag_and_digest(image)
    return "Always" if parsed is not None and parsed[0] == "latest" else "IfNotPresent"
