"""Flag values in kube's syntax: durations (``1m30s``), sizes (``8Gi``), booleans, lists."""

from __future__ import annotations

import ipaddress
import re

from platform_api import goduration, gotext


class ConfigError(ValueError):
    pass


# How a gathered flag's occurrences (flagoptions.gather) are joined into the one value
# ``configure`` reads: slices and maps with a comma (their values are comma lists
# already); an array of values that hold commas themselves (--tls-sni-cert-key) with
# NUL, which no argument can contain.
LIST = ","
ARRAY = "\0"


def parse_duration(flag: str, text: str) -> float:
    """A duration flag (``5m``, ``90s``, ``1m30s``, ``500ms``) in seconds, read by Go's
    ``time.ParseDuration``; refused in pflag's words around Go's."""
    try:
        return goduration.parse_duration(text) / 1e9
    except ValueError as e:
        raise ConfigError(f'invalid argument "{text}" for "--{flag}" flag: {e}') from None


_SIZE = re.compile(r"^(\d+)([KMGTPE]i?)?\Z")
_SIZES = {
    "": 1,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def parse_size(flag: str, text: str) -> int:
    match = _SIZE.match(text.strip())
    if not match or (match.group(2) or "") not in _SIZES:
        raise ConfigError(f'invalid argument "{text}" for "--{flag}" flag: not a quantity of bytes')
    return int(match.group(1)) * _SIZES[match.group(2) or ""]


def go_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``: the spellings it accepts, else None."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def parse_bool(flag: str, text: str) -> bool:
    """A boolean flag's value; bare (``--flag``, given here as "") means true."""
    value = True if text.strip() == "" else go_bool(text.strip())
    if value is None:
        raise ConfigError(
            f'invalid argument "{text}" for "--{flag}" flag: strconv.ParseBool: parsing "{text}": invalid syntax'
        )
    return value


def parse_int(flag: str, text: str, minimum: int = 0, bits: int = 64) -> int:
    """An integer flag as pflag reads it (``strconv.ParseInt(text, 0, bits)``: ``0x1F``,
    ``1_000``), refused in its words; then at least ``minimum``."""
    try:
        value = gotext.parse_int(text, base=0, bits=bits)
    except ValueError as e:
        raise ConfigError(f'invalid argument "{text}" for "--{flag}" flag: {e}') from None
    if value < minimum:
        raise ConfigError(f"--{flag} must be at least {minimum}")
    return value


def parse_ip(flag: str, text: str) -> str:
    """pflag's IP flag: the address in Go's canonical spelling."""
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        raise ConfigError(
            f'invalid argument "{text}" for "--{flag}" flag: failed to parse IP: "{text}"'
        ) from None


def parse_list(text: str | None) -> tuple[str, ...]:
    """A comma-separated flag value, blanks dropped."""
    return tuple(item.strip() for item in (text or "").split(",") if item.strip())


def parse_port_range(flag: str, text: str) -> tuple[int, int]:
    """A port range flag as kube's ``utilnet.PortRange`` reads it: ``30000-32767``,
    ``30000+2767`` or one port; the lowest and highest port."""
    value = text.strip()

    def atoi(part: str) -> int:
        try:
            return gotext.parse_int(part, bits=64)
        except ValueError as e:
            go = str(e).replace("strconv.ParseInt", "strconv.Atoi")
            raise ConfigError(f'invalid argument "{text}" for "--{flag}" flag: {go}') from None

    hyphen, plus = "-" in value, "+" in value
    if hyphen and plus:
        problem = f"unable to parse port range: {value}"
        raise ConfigError(f'invalid argument "{text}" for "--{flag}" flag: {problem}')
    if hyphen:
        first, _, last = value.partition("-")
        low, high = atoi(first), atoi(last)
    elif plus:
        first, _, size = value.partition("+")
        low = atoi(first)
        high = low + atoi(size)
    else:
        low = high = atoi(value)
    problem = ""
    if low > 65535 or high > 65535:
        problem = f"the port range cannot be greater than 65535: {value}"
    elif high < low:
        problem = f"end port cannot be less than start port: {value}"
    if problem:
        raise ConfigError(f'invalid argument "{text}" for "--{flag}" flag: {problem}')
    return low, high
