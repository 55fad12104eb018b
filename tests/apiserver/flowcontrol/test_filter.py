"""The filter: headers, exempt requests, queuing, kube's 429, timeouts, metrics."""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet.defer import Deferred, ensureDeferred
from twisted.web.server import Request
from twisted.web.test.requesthelper import DummyChannel

from platform_api.apiserver import requestinfo
from platform_api.apiserver.flowcontrol.filter import PriorityAndFairness
from platform_api.apiserver.flowcontrol.metrics import (
    AVERAGE,
    DISPATCHED,
    EXECUTION,
    GAUGES,
    HIGH_WATERMARK,
    LOWER,
    REJECTED,
    SEAT_UTILIZATION,
    TARGET,
    UPPER,
    WAIT,
)
from platform_api.authentication.user import UserInfo
from platform_api.endpoints.responses import write_error
from platform_api.errors import StatusError
from platform_api.registry.flowcontrol_bootstrap import GROUP
from tests.apiserver.flowcontrol.conftest import World

ADMIN = UserInfo("admin", groups=("system:masters", "system:authenticated"))
FLOODER = UserInfo("flooder", groups=("system:authenticated",))
SEAT_BOUNDS = SEAT_UTILIZATION.bounds


def _request(path: str = "/api/v1/namespaces/a/configmaps") -> Request:
    channel = DummyChannel()
    request = Request(channel)
    request.sent = channel.transport  # type: ignore[attr-defined]  # kept past finish
    request.method = b"GET"
    request.clientproto = b"HTTP/1.1"
    request.uri = request.path = path.encode()
    request.args = {}
    return request


def _tiny(world: World) -> None:
    """Level 'tiny' (3 seats of 600: 1 share of 246, none borrowed), one queue of one;
    schema for flooder."""
    world.create(
        world.levels,
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "tiny"},
            "spec": {
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 1,
                    "borrowingLimitPercent": 0,
                    "limitResponse": {
                        "type": "Queue",
                        "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1},
                    },
                },
            },
        },
    )
    world.create(
        world.schemas,
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "FlowSchema",
            "metadata": {"name": "flooders"},
            "spec": {
                "priorityLevelConfiguration": {"name": "tiny"},
                "matchingPrecedence": 500,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [
                    {
                        "subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                        "resourceRules": [
                            {
                                "verbs": ["*"],
                                "apiGroups": ["*"],
                                "resources": ["*"],
                                "namespaces": ["*"],
                                "clusterScope": True,
                            }
                        ],
                    }
                ],
            },
        },
    )


class Held:
    """A request inside the filter until ``release`` (the handler's run)."""

    def __init__(self, apf: PriorityAndFairness, user: UserInfo, request: Request) -> None:
        self.request = request
        self.entered = False
        self.error: BaseException | None = None
        self._release: Deferred[None] = Deferred()
        info = requestinfo.parse(request.method, request.path.decode(), {})
        self.done = ensureDeferred(self._run(apf, info, user))

    async def _run(self, apf: PriorityAndFairness, info: Any, user: UserInfo) -> None:
        try:
            async with apf.admit(self.request, info, user):
                self.entered = True
                await self._release
        except StatusError as e:
            self.error = e

    def release(self) -> None:
        self._release.callback(None)


def test_headers_name_schema_and_level_by_uid(world: World) -> None:
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    held = Held(apf, ADMIN, _request())
    assert held.entered
    headers = held.request.responseHeaders
    exempt_fs = world.schemas.get("", "exempt").object["metadata"]["uid"]
    exempt_pl = world.levels.get("", "exempt").object["metadata"]["uid"]
    assert headers.getRawHeaders(b"X-Platform-PF-FlowSchema-UID") == [exempt_fs.encode()]
    assert headers.getRawHeaders(b"X-Platform-PF-PriorityLevel-UID") == [exempt_pl.encode()]
    held.release()


def test_flood_queues_then_gets_kubes_429(world: World) -> None:
    _tiny(world)
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    before = REJECTED.values.get(("flooders", "tiny", "queue-full"), 0)
    running = [Held(apf, FLOODER, _request()) for _ in range(3)]
    assert all(h.entered for h in running)
    queued = Held(apf, FLOODER, _request())
    assert not queued.entered and queued.error is None
    refused = Held(apf, FLOODER, _request())
    assert isinstance(refused.error, StatusError) and refused.error.code == 429
    write_error(refused.request, refused.error)  # as the chain does with what the filter raised
    written = refused.request.sent.written.getvalue()  # type: ignore[attr-defined]
    head, _, body = written.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 429 Too Many Requests")
    assert b"Retry-After: 1" in head
    assert b"Content-Type: text/plain; charset=utf-8" in head
    assert b"X-Content-Type-Options: nosniff" in head
    assert b"Cache-Control: no-cache, private" in head
    assert body == b"Too many requests, please try again later.\n"
    assert REJECTED.values[("flooders", "tiny", "queue-full")] == before + 1
    # The administrator is never queued behind them.
    admin = Held(apf, ADMIN, _request())
    assert admin.entered
    running[0].release()
    assert queued.entered
    for h in (*running[1:], queued, admin):
        h.release()
    assert world.config.levels["tiny"].queues.executing == 0


def test_wait_is_a_quarter_of_the_request_timeout(world: World) -> None:
    _tiny(world)
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    running = [Held(apf, FLOODER, _request()) for _ in range(3)]
    queued = Held(apf, FLOODER, _request())
    world.clock.advance(14.9)
    assert queued.error is None
    world.clock.advance(0.2)
    assert isinstance(queued.error, StatusError) and queued.error.code == 429
    assert REJECTED.values[("flooders", "tiny", "time-out")] >= 1
    assert WAIT.values[("false", "flooders", "tiny")][-1] >= 15.0
    for h in running:
        h.release()


def test_client_gone_while_queued_is_cancelled(world: World) -> None:
    _tiny(world)
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    running = [Held(apf, FLOODER, _request()) for _ in range(3)]
    queued = Held(apf, FLOODER, _request())
    queued.request.connectionLost(Exception("gone"))
    assert isinstance(queued.error, StatusError)
    assert REJECTED.values[("flooders", "tiny", "cancelled")] >= 1
    assert world.config.levels["tiny"].queues.waiting == 0  # type: ignore[union-attr]
    for h in running:
        h.release()


def test_a_watch_holds_its_seat_until_it_has_started(world: World) -> None:
    """kube's watch initialization signal: the watch takes a seat while it sends its
    initial state, then gives it back and is counted among the watches a write weighs."""
    _tiny(world)
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    running = [Held(apf, FLOODER, _request()) for _ in range(2)]
    request = _request("/api/v1/namespaces/a/configmaps")
    request.args = {b"watch": [b"1"]}
    info = requestinfo.parse(b"GET", request.path.decode(), request.args)
    assert info.verb == "watch"
    before = DISPATCHED.values.get(("flooders", "tiny"), 0)
    started: list[Any] = []
    ended: Deferred[None] = Deferred()

    async def run() -> None:
        async with apf.admit(request, info, FLOODER) as initialized:
            started.append(initialized)
            await ended

    done = ensureDeferred(run())
    assert DISPATCHED.values[("flooders", "tiny")] == before + 1
    assert request.responseHeaders.hasHeader(b"X-Platform-PF-FlowSchema-UID")
    waiting = Held(apf, FLOODER, _request())  # the level's 3 seats are all held
    assert not waiting.entered
    write = requestinfo.parse(b"PUT", "/api/v1/namespaces/a/configmaps/x", {})
    assert world.estimator.watches.interested(write) == 1
    started[0]()  # the initial state is sent
    assert waiting.entered
    assert world.estimator.watches.interested(write) == 1  # still watching
    ended.callback(None)
    assert done.called
    assert world.estimator.watches.interested(write) == 0
    for h in [*running, waiting]:
        h.release()


def test_other_long_running_requests_pass_unclassified(world: World) -> None:
    """exec, attach, port-forward, proxy and logs bypass the filter in kube: no seat, no
    headers, even with the level full."""
    _tiny(world)
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    running = [Held(apf, FLOODER, _request()) for _ in range(3)]
    request = _request("/api/v1/namespaces/a/pods/p/log")
    held = Held(apf, FLOODER, request)
    assert held.entered
    assert not request.responseHeaders.hasHeader(b"X-Platform-PF-FlowSchema-UID")
    for h in [*running, held]:
        h.release()


@pytest.mark.parametrize("drops", [2, 40])
def test_retry_after_grows_with_drops(world: World, drops: int) -> None:
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    for _second in range(4):
        for _ in range(drops):
            apf.dropped.record("tiny")
        world.clock.advance(1)
    apf.dropped.record("tiny")
    assert apf.dropped.retry_after("tiny") == (1 if drops == 2 else 4)


def test_busy_level_borrows_idle_seats(world: World) -> None:
    """Without a borrowing limit the tiny level takes idle seats at the next period."""
    _tiny(world)
    obj = world.levels.get("", "tiny").object
    del obj["spec"]["limited"]["borrowingLimitPercent"]
    world.run(world.levels.update("", "tiny", lambda _old: obj))
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    held = [Held(apf, FLOODER, _request()) for _ in range(4)]
    assert [h.entered for h in held] == [True, True, True, False]
    world.clock.advance(10.0)  # a borrowing period: demand 4 > 3 seats, others idle
    assert held[3].entered
    assert world.config.levels["tiny"].queues.limit >= 4  # type: ignore[union-attr]
    for h in held:
        h.release()


def test_an_exempt_levels_peak_is_held_back_from_lending(world: World) -> None:
    """kube gives the limited levels what the exempt ones leave: an exempt level's
    seats in the last period (its high watermark), reported as its current limit."""
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    held = [Held(apf, ADMIN, _request()) for _ in range(50)]
    assert all(h.entered for h in held)
    exempt = world.config.levels["exempt"]
    assert exempt.use is not None and exempt.use.seats == 50
    world.clock.advance(10.0)  # a borrowing period
    assert exempt.current == 50
    assert GAUGES.current["exempt"] == 50
    for h in held:
        h.release()
    assert exempt.use.seats == 0
    world.clock.advance(10.0)  # the peak of that period was still 50
    world.clock.advance(10.0)
    assert exempt.current == 0


def test_execution_and_queued_seats_are_recorded(world: World) -> None:
    """kube's request_execution_seconds (a watch's initial stage only, typed "watch"),
    current_inqueue_seats while a request waits, and each level's bounds and demand."""
    _tiny(world)
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    EXECUTION.clear()
    labels = ("flooders", "tiny")
    running = [Held(apf, FLOODER, _request()) for _ in range(3)]
    waiting = Held(apf, FLOODER, _request())
    assert GAUGES.inqueue_seats[labels] == 1
    world.clock.advance(2.0)
    running[0].release()
    assert GAUGES.inqueue_seats[labels] == 0 and waiting.entered
    assert EXECUTION.values[(*labels, "regular")][-1] == 2.0  # the sum of durations
    for h in [*running[1:], waiting]:
        h.release()
    assert GAUGES.levels[LOWER]["tiny"] == 3 and GAUGES.levels[UPPER]["tiny"] == 3
    world.clock.advance(10.0)  # a borrowing period
    assert GAUGES.levels[HIGH_WATERMARK]["tiny"] == 4  # three running and one waiting
    assert GAUGES.levels[AVERAGE]["tiny"] > 0


def test_levels_follow_kubes_timing_ratio_series_and_allocation(world: World) -> None:
    """priority_level_request_utilization and _seat_utilization (3 of 3 seats busy for 2 s,
    one request of the one-request queue waiting), read_vs_write_current_requests,
    demand_seats, and each period's target_seats and seat_fair_frac."""
    _tiny(world)
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    level = world.config.levels["tiny"]
    assert level.queues is not None and level.queues.timings is not None
    timings = level.queues.timings
    running = [Held(apf, FLOODER, _request()) for _ in range(3)]
    waiting = Held(apf, FLOODER, _request())
    assert (timings.waiting.numerator, timings.waiting.denominator) == (1, 1)
    assert (timings.executing.numerator, timings.executing.denominator) == (3, 3)
    assert (timings.demand.numerator, timings.demand.denominator) == (4, 3)
    assert (apf.waiting_share[False].numerator, apf.executing_share[False].numerator) == (1, 3)
    executing, room = world.config.capacity()
    assert apf.waiting_share[False].denominator == room and room > 1
    assert apf.executing_share[False].denominator == executing >= 600  # ceil of each share
    world.clock.advance(2.0)
    seats = timings.seats.sample()
    assert seats[SEAT_BOUNDS.index(1.0)] == 2e9 and seats[-1] == 2e9  # 2 s at 3/3
    running[0].release()
    assert waiting.entered and apf.waiting_share[False].numerator == 0
    for h in [*running[1:], waiting]:
        h.release()
    assert timings.executing.numerator == 0
    world.clock.advance(10.0)  # a borrowing period: targets and the fair proportion
    assert GAUGES.levels[TARGET]["tiny"] == 3  # it kept its 3 seats (its demand's peak)
    assert GAUGES.fair_frac > 0
    assert timings.executing.denominator == level.limit == 3


def test_read_vs_write_keeps_its_denominators_while_no_level_is_known(world: World) -> None:
    """Before the informer has read any level, the room and seats are 0: the series keep
    the denominators they had, where 0/0 would make their sums NaN for good (and the
    OpenMetrics scrape refuses a NaN sum)."""
    apf = PriorityAndFairness(world.config, world.clock, 60.0, world.estimator)
    before = (apf.waiting_share[False].denominator, apf.executing_share[True].denominator)
    assert all(before)
    world.config.levels = {}
    for listener in world.config.on_rebuild:
        listener()
    after = (apf.waiting_share[False].denominator, apf.executing_share[True].denominator)
    assert after == before
