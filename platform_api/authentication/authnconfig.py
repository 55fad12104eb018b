"""``--authentication-config``: AuthenticationConfiguration (apiserver.config.platform.io).

JWT authenticators with their issuer, audiences, claim validation rules, claim
mappings (a claim with a prefix, or a CEL expression over ``claims``), extra keys and
user validation rules (CEL over ``user``), and the ``anonymous`` block.  Every
problem is reported at load time as a field error, CEL ones with the expression.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from platform_api.authentication.interface import AuthenticationError
from platform_api.authentication.oidc import OIDCOptions
from platform_api.authentication.user import UserInfo

if TYPE_CHECKING:  # CEL loads with the first expression: flags are parsed without one
    from platform_api.cel import Environment, Program

API_VERSIONS = ("apiserver.config.platform.io/v1beta1", "apiserver.config.platform.io/v1")
MAX_JWT = 64
_CLAIMS, _USER = "claims", "user"  # the variable each kind of expression sees
_STRING, _STRINGS, _BOOL = ("STRING",), ("STRING", "LIST<STRING>"), ("BOOL",)


class ConfigError(ValueError):
    pass


@dataclass
class Mapping:
    """A claim (with a prefix) or an expression that yields a user attribute."""

    claim: str = ""
    prefix: str = ""
    program: Program | None = None

    def value(self, claims: dict[str, Any]) -> Any:
        if self.program is not None:
            return _run(self.program, {"claims": claims})
        raw = claims.get(self.claim)
        if raw is None:
            return None
        if isinstance(raw, list):
            return [self.prefix + str(v) for v in raw]
        return self.prefix + str(raw)


@dataclass
class JWTRule:
    options: OIDCOptions
    ca_pem: bytes | None
    username: Mapping
    groups: Mapping | None = None
    uid: Mapping | None = None
    extra: list[tuple[str, Program]] = field(default_factory=list)
    claim_rules: list[tuple[str, str, Program | None, str]] = field(default_factory=list)
    user_rules: list[tuple[Program, str]] = field(default_factory=list)

    def user(self, claims: dict[str, Any]) -> UserInfo:
        """kube's claim processing: validate claims, map them, validate the user."""
        for claim, required, program, message in self.claim_rules:
            if program is not None:
                if _run(program, {"claims": claims}) is not True:
                    raise AuthenticationError(
                        message or f"claim validation failed: {program.source}"
                    )
            elif claims.get(claim) != required:
                raise AuthenticationError(f"oidc: required claim {claim} value does not match")
        name = self.username.value(claims)
        if not isinstance(name, str) or not name:
            raise AuthenticationError("oidc: username is required")
        groups = self.groups.value(claims) if self.groups else None
        groups = [groups] if isinstance(groups, str) else list(groups or [])
        uid = self.uid.value(claims) if self.uid else ""
        extra: dict[str, tuple[str, ...]] = {}
        for key, program in self.extra:
            value = _run(program, {"claims": claims})
            values = [value] if isinstance(value, str) else list(value or [])
            if values:
                extra[key] = tuple(str(v) for v in values)
        user = UserInfo(name, str(uid or ""), tuple(str(g) for g in groups), extra)
        view = {
            "username": user.name,
            "uid": user.uid,
            "groups": list(user.groups),
            "extra": {k: list(v) for k, v in extra.items()},
        }
        for program, message in self.user_rules:
            if _run(program, {"user": view}) is not True:
                raise AuthenticationError(message or f"user validation failed: {program.source}")
        return user


@functools.cache
def _environment(variable: str) -> Environment:
    from platform_api.cel import DYN_MAP, Environment  # noqa: PLC0415

    return Environment({variable: DYN_MAP})


def _run(program: Program, variables: dict[str, Any]) -> Any:
    from platform_api.cel import CELError  # noqa: PLC0415

    try:
        return program.run(variables)
    except CELError as e:
        raise AuthenticationError(f"oidc: error evaluating {program.source!r}: {e}") from None


@dataclass
class AuthenticationConfig:
    jwt: list[JWTRule]
    anonymous_enabled: bool | None = None  # None: the block is absent
    anonymous_paths: tuple[str, ...] | None = None


class _Errors(list[str]):
    def compile(
        self, variable: str, path: str, source: str, allowed: tuple[str, ...]
    ) -> Program | None:
        from platform_api.cel import CELError  # noqa: PLC0415

        try:
            return _environment(variable).compile(source, allowed)
        except CELError as e:
            self.append(f"{path}: Invalid value: {source!r}: {e}")
            return None


def load(path: str, service_account_issuers: tuple[str, ...] = ()) -> AuthenticationConfig:
    with open(path, "rb") as f:
        try:
            doc = yaml.safe_load(f) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "AuthenticationConfiguration":
        raise ConfigError(f"{path}: not an AuthenticationConfiguration")
    if doc.get("apiVersion") not in API_VERSIONS:
        raise ConfigError(f"{path}: unsupported apiVersion {doc.get('apiVersion')!r}")
    errs = _Errors()
    entries = doc.get("jwt") or []
    if len(entries) > MAX_JWT:
        errs.append(f"jwt: Too many: {len(entries)}: must have at most {MAX_JWT} items")
    rules, seen = [], set()
    for i, entry in enumerate(entries):
        rule = _jwt(entry or {}, f"jwt[{i}]", errs)
        url = rule.options.issuer_url if rule else ""
        if url in seen:
            errs.append(f"jwt[{i}].issuer.url: Duplicate value: {url!r}")
        if url and url in service_account_issuers:
            errs.append(
                f"jwt[{i}].issuer.url: Invalid value: {url!r}: issuer URL must not overlap "
                "with disallowed issuers: " + str(list(service_account_issuers))
            )
        seen.add(url)
        if rule is not None:
            rules.append(rule)
    config = AuthenticationConfig(rules)
    anonymous = doc.get("anonymous")
    if anonymous is not None:
        config.anonymous_enabled = bool(anonymous.get("enabled"))
        conditions = anonymous.get("conditions") or []
        if conditions and not config.anonymous_enabled:
            errs.append("anonymous.conditions: Invalid value: conditions need anonymous.enabled")
        if conditions:
            config.anonymous_paths = tuple(str(c.get("path", "")) for c in conditions)
    if errs:
        raise ConfigError("\n".join(errs))
    return config


def _mapping(
    block: Any, path: str, errs: _Errors, allowed: tuple[str, ...], needs_prefix: bool
) -> Mapping | None:
    if not block:
        return None
    claim, expression = block.get("claim") or "", block.get("expression") or ""
    if bool(claim) == bool(expression):
        errs.append(f"{path}: Invalid value: one of claim or expression must be set")
        return None
    if expression:
        if block.get("prefix"):
            errs.append(
                f"{path}.prefix: Invalid value: may not be specified when expression is set"
            )
        return Mapping(program=errs.compile(_CLAIMS, f"{path}.expression", expression, allowed))
    if needs_prefix and block.get("prefix") is None:
        errs.append(f"{path}.prefix: Required value: prefix is required when claim is set")
    return Mapping(claim=claim, prefix=block.get("prefix") or "")


def _issuer(issuer: dict[str, Any], path: str, errs: _Errors) -> OIDCOptions:
    url = issuer.get("url") or ""
    if not url.startswith("https://"):
        errs.append(f"{path}.url: Invalid value: {url!r}: URL scheme must be https")
    audiences = tuple(issuer.get("audiences") or ())
    if not audiences:
        errs.append(f"{path}.audiences: Required value: at least one issuer.audiences is required")
    policy = issuer.get("audienceMatchPolicy") or ""
    if len(audiences) > 1 and policy != "MatchAny":
        errs.append(
            f"{path}.audienceMatchPolicy: Invalid value: {policy!r}: audienceMatchPolicy must "
            "be MatchAny for multiple audiences"
        )
    return OIDCOptions(
        issuer_url=url,
        client_id=audiences[0] if audiences else "",
        audiences=audiences[1:],
        discovery_url=issuer.get("discoveryURL") or "",
    )


def _jwt(entry: dict[str, Any], path: str, errs: _Errors) -> JWTRule | None:
    issuer = entry.get("issuer") or {}
    options = _issuer(issuer, f"{path}.issuer", errs)
    mappings = entry.get("claimMappings") or {}
    at = f"{path}.claimMappings"
    username = _mapping(mappings.get("username"), f"{at}.username", errs, _STRING, True)
    if not mappings.get("username"):
        errs.append(f"{at}.username: Required value: claim or expression is required")
    rule = JWTRule(
        options,
        issuer.get("certificateAuthority", "").encode() or None,
        username or Mapping(claim="sub"),
        _mapping(mappings.get("groups"), f"{at}.groups", errs, _STRINGS, True),
        _mapping(mappings.get("uid"), f"{at}.uid", errs, _STRING, False),
    )
    _extra(mappings.get("extra") or [], at, rule, errs)
    _validation(entry, path, rule, errs)
    return rule


def _extra(entries: list[Any], at: str, rule: JWTRule, errs: _Errors) -> None:
    for j, extra in enumerate(entries):
        key, source = str(extra.get("key") or ""), str(extra.get("valueExpression") or "")
        if not key or key != key.lower() or "/" not in key:
            errs.append(
                f"{at}.extra[{j}].key: Invalid value: {key!r}: must be a lowercase "
                "domain-prefixed path"
            )
        program = errs.compile(_CLAIMS, f"{at}.extra[{j}].valueExpression", source, _STRINGS)
        if program is not None:
            rule.extra.append((key, program))


def _validation(entry: dict[str, Any], path: str, rule: JWTRule, errs: _Errors) -> None:
    for j, check in enumerate(entry.get("claimValidationRules") or []):
        at = f"{path}.claimValidationRules[{j}]"
        if check.get("expression"):
            program = errs.compile(_CLAIMS, f"{at}.expression", check["expression"], _BOOL)
            rule.claim_rules.append(("", "", program, check.get("message") or ""))
        else:
            claim, value = check.get("claim") or "", check.get("requiredValue") or ""
            rule.claim_rules.append((claim, value, None, ""))
    for j, check in enumerate(entry.get("userValidationRules") or []):
        source = str(check.get("expression") or "")
        at = f"{path}.userValidationRules[{j}].expression"
        program = errs.compile(_USER, at, source, _BOOL)
        if program is not None:
            rule.user_rules.append((program, check.get("message") or ""))
