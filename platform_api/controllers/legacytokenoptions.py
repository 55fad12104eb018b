"""kube-controller-manager's ``--legacy-service-account-token-clean-up-period``, for both
homes of the controllers (read at start, without loading the cleaner)."""

from __future__ import annotations

from platform_api.apiserver.flagvalues import ConfigError, parse_duration

DAY = 24 * 3600.0
CLEAN_UP_PERIOD = 365 * DAY  # kube's default
CLEANER_FLAGS: list[tuple[str, str, str]] = [
    (
        "legacy-service-account-token-clean-up-period",
        "8760h0m0s",
        "The period of time since the last usage of an legacy service account token before "
        "it can be deleted.",
    ),
]


def clean_up_period(text: str | None) -> float:
    """The flag's value in seconds; refused unless above zero, as kube refuses it."""
    if text is None:
        return CLEAN_UP_PERIOD
    seconds = parse_duration("legacy-service-account-token-clean-up-period", text)
    if not seconds > 0:
        raise ConfigError(f"invalid CleanUpPeriod: {text}")
    return seconds
