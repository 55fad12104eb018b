"""--enable-priority-and-fairness: on by default; kube's check of the seat total."""

from __future__ import annotations

import pytest

from platform_api.apiserver.config import ConfigError, from_flags


def test_on_by_default_and_can_be_turned_off() -> None:
    assert from_flags({}).enable_priority_and_fairness is True
    off = from_flags({"enable-priority-and-fairness": "false"})
    assert off.enable_priority_and_fairness is False


def test_seats_must_add_up_to_something_positive() -> None:
    zero: dict[str, str | None] = {
        "max-requests-inflight": "0",
        "max-mutating-requests-inflight": "0",
    }
    with pytest.raises(ConfigError) as caught:
        from_flags(zero)
    assert str(caught.value) == (
        "invalid configuration: MaxRequestsInFlight=0 and MaxMutatingRequestsInFlight=0; "
        "they must add up to something positive"
    )
    # Without APF, 0 means no limit (max-in-flight).
    assert from_flags({**zero, "enable-priority-and-fairness": "false"}).max_requests_inflight == 0
