"""--enable-priority-and-fairness: on by default; kube's check of the seat total."""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet.task import Clock

from platform_api.apiserver import flowcontrol
from platform_api.apiserver.config import ConfigError, from_flags
from platform_api.apiserver.flowcontrol import worker_share
from platform_api.apiserver.inflight import InflightLimiter


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


def test_workers_split_the_in_flight_budget() -> None:
    """--workers N is one server: together the workers hold the flags' seats, not N times."""
    one = from_flags({})
    assert worker_share(one) == (400, 200)
    two = from_flags({"workers": "2"})
    assert worker_share(two) == (200, 100)
    odd = from_flags({"workers": "3", "max-requests-inflight": "10"})
    assert worker_share(odd) == (4, 67)  # rounded up: never less than the whole
    unlimited = from_flags(
        {"workers": "4", "max-requests-inflight": "0", "enable-priority-and-fairness": "false"}
    )
    assert worker_share(unlimited)[0] == 0  # no limit stays no limit
    no_apf = from_flags({"workers": "2", "enable-priority-and-fairness": "false"})
    unused: Any = None  # storage and hub: only APF reads them
    limiter = flowcontrol.limiter(no_apf, {}, unused, unused, Clock(), [])
    assert isinstance(limiter, InflightLimiter)
    assert limiter.limits == {False: 200, True: 100}
