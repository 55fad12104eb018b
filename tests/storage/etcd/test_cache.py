"""WatchCache fed as etcd 3.5.1 fed it in a failed run: a progress notification first,
then the events of revisions it covered (etcd-io/etcd#15220)."""

from __future__ import annotations

import random

import pytest

from platform_api.storage.chunks import select
from platform_api.storage.etcd.cache import WatchCache
from platform_api.storage.etcd.history import ResourceHistory
from platform_api.storage.interface import (
    ADDED,
    DELETED,
    EXPIRED,
    MODIFIED,
    UNREADABLE,
    Event,
    ListOptions,
    StorageError,
    Stored,
    Unreadable,
    readable,
)

KEY = b"/coordination.platform.io/leases/platform-system/lease"


def _event(kind: str, revision: int) -> Event:
    return Event(kind, revision, KEY, Stored(KEY, revision, b"{}"), None)


def test_events_after_an_early_progress_notification_are_applied() -> None:
    cache = WatchCache(lambda: 0.0)
    cache.load([Stored(KEY, 819, b"{}")], 819)
    written = cache.wait_for(820)  # our own write at 820, its event not in yet
    cache.advance(823)  # the progress notification etcd sent before that event
    assert written.called
    late = [_event(MODIFIED, 820)]
    assert cache.apply(late, 824) == late  # still new: the write's own state
    cache.advance(824)
    assert cache.data[KEY].revision == 820
    assert [e.revision for e in cache.events_since(819)] == [820]


def test_an_event_seen_already_is_not_applied_twice() -> None:
    cache = WatchCache(lambda: 0.0)
    cache.load([], 10)
    first = [_event(ADDED, 11)]
    cache.advance(20)  # a progress notification alone applies nothing
    assert cache.apply(first, 11) == first
    assert cache.apply(first, 21) == []  # a watch made again from an older revision
    assert cache.apply([_event(ADDED, 9)], 12) == []  # from before the list


def test_a_filtered_list_leaves_an_unreadable_value_to_its_caller() -> None:
    """A selector cannot be matched against a value that does not decode: the chunk
    carries it, and the caller reports it (a client's list) or passes over it (readable)."""
    ok = Stored(b"/core/configmaps/ns/a", 2, b'{"metadata":{"name":"a"}}')
    error = StorageError(UNREADABLE, b"/core/configmaps/ns/b", "not a map")
    bad = Unreadable(b"/core/configmaps/ns/b", 3, b"words", error, "/registry/configmaps/ns/b")
    items = {s.key: s for s in (ok, bad)}
    seen = []

    def match(obj: dict[str, object]) -> bool:
        seen.append(obj)
        return True

    result = select(sorted(items), 2, items.__getitem__, ListOptions(predicate=match), 3)
    assert result.items == [ok, bad] and seen == [ok.object]
    assert readable(result.items) == [ok]


def test_a_chunk_reads_within_its_prefix_as_keys_come_and_go() -> None:
    """Chunks, counts and the keys left, over the sorted keys as creates and deletes
    change them (a neighbouring namespace's keys stay out)."""
    cache = WatchCache(lambda: 0.0)
    names = [b"/core/configmaps/a/%d" % i for i in (1, 3, 5)]
    cache.load([Stored(k, 1, b"{}") for k in [*names, b"/core/configmaps/b/0"]], 1)
    added = b"/core/configmaps/a/2"
    cache.apply([Event(ADDED, 2, added, Stored(added, 2, b"{}"), None)], 2)
    gone = cache.data[names[1]]
    cache.apply([Event(DELETED, 3, gone.key, gone, gone)], 3)
    cache.advance(3)
    prefix = b"/core/configmaps/a/"
    first = cache.get_list(prefix, ListOptions(limit=2))
    assert [s.key for s in first.items] == [names[0], added]
    assert (first.continue_key, first.remaining, cache.count(prefix)) == (added, 1, 3)
    rest = cache.get_list(prefix, ListOptions(start_after=added, limit=2))
    assert ([s.key for s in rest.items], rest.continue_key) == ([names[2]], None)
    past = cache.get_list(prefix, ListOptions(start_after=b"/core/configmaps/b/", limit=2))
    assert (past.items, past.continue_key) == ([], None)
    at_two = cache.get_list(prefix, ListOptions(revision=2))
    assert [s.key for s in at_two.items] == [names[0], added, names[1], names[2]]


def test_lists_at_past_revisions_agree_with_the_states_they_had() -> None:
    """Random creates, updates and deletes in two namespaces; every list at an older
    revision, from any key on and in chunks of any size, is the state the prefix had."""
    rng = random.Random(13)
    cache = WatchCache(lambda: 0.0)
    cache.load([], 1)
    states = {1: {}}
    state: dict[bytes, Stored] = {}
    for revision in range(2, 200):
        key = b"/core/configmaps/%s/%d" % (rng.choice([b"a", b"ab"]), rng.randrange(12))
        prev = state.get(key)
        if prev is not None and rng.random() < 0.4:
            event = Event(DELETED, revision, key, prev, prev)
            del state[key]
        else:
            stored = Stored(key, revision, b"{}")
            event = Event(ADDED if prev is None else MODIFIED, revision, key, stored, prev)
            state[key] = stored
        cache.apply([event], revision)
        cache.advance(revision)
        states[revision] = dict(state)
    for _ in range(400):
        target = rng.randrange(1, 199)
        prefix = rng.choice([b"/core/configmaps/a/", b"/core/configmaps/"])
        start = rng.choice([b"", *sorted(states[target])])
        limit = rng.randrange(4)
        got = cache.get_list(prefix, ListOptions(target, start, limit))
        then = sorted(k for k in states[target] if k.startswith(prefix) and k > start)
        taken = then[:limit] if limit else then
        assert [(s.key, s.revision) for s in got.items] == [
            (k, states[target][k].revision) for k in taken
        ]
        more = len(then) > len(taken)
        assert (got.continue_key, got.remaining) == (
            (taken[-1], len(then) - len(taken)) if more else (None, None)
        )
        single = cache.get_list(prefix + b"3", ListOptions(target, single=True))
        assert [s.key for s in single.items] == [k for k in [prefix + b"3"] if k in states[target]]


def _writes(cache: WatchCache, first: int, count: int) -> None:
    """Writes to seven keys in turn, each an ADDED the first time, MODIFIED after."""
    for revision in range(first, first + count):
        key = b"/core/configmaps/ns/cm-%d" % (revision % 7)
        prev = cache.data.get(key)
        stored = Stored(key, revision, b"{}")
        kind = ADDED if prev is None else MODIFIED
        cache.apply([Event(kind, revision, key, stored, prev)], revision)
        cache.advance(revision)


def test_each_resource_keeps_its_own_history() -> None:
    """A burst of writes to one resource pushes only its own history out: a watch of a
    quiet resource from before the burst is served whole (kube keeps a history per
    cacher), while one of the busy resource from there is Expired with kube's floor."""
    now = [0.0]
    cache = WatchCache(lambda: now[0], history=lambda floor: ResourceHistory(floor, 4, 8))
    cache.load([], 100)
    quiet = b"/core/secrets/ns/s"
    cache.apply([Event(ADDED, 101, quiet, Stored(quiet, 101, b"{}"), None)], 101)
    _writes(cache, 102, 30)  # the busy history grows to its upper bound, 8, and stays
    assert [e.revision for e in cache.events_since(100, b"/core/secrets/")] == [101]
    assert [e.revision for e in cache.events_since(100, quiet)] == [101]
    busy = cache.events_since(123, b"/core/configmaps/")
    assert [e.revision for e in busy] == list(range(124, 132))
    for read in (
        lambda: cache.events_since(122, b"/core/configmaps/"),
        lambda: cache.get_list(b"/core/configmaps/", _at(122)),
    ):
        with pytest.raises(StorageError) as expired:
            read()
        assert expired.value.code == EXPIRED
    with pytest.raises(StorageError) as expired:
        cache.events_since(122, b"/core/configmaps/ns/")
    assert expired.value.revision == 123  # kube's "too old resource version: 122 (123)"
    assert len(cache.get_list(b"/core/configmaps/", _at(123)).items) == 7
    assert len(cache.get_list(b"/core/secrets/", _at(100)).items) == 0
    # Every resource at once: each one's floor counts, its events in revision order.
    with pytest.raises(StorageError):
        cache.events_since(100)
    assert [e.revision for e in cache.events_since(129)] == [130, 131]
    assert [e.revision for e in cache.events_since(129, b"/core/")] == [130, 131]


def test_a_resource_with_no_events_since_the_list_is_watched_from_the_list() -> None:
    cache = WatchCache(lambda: 0.0)
    cache.load([], 50)
    assert cache.events_since(50, b"/core/pods/") == []
    with pytest.raises(StorageError) as expired:
        cache.events_since(49, b"/core/pods/")
    assert expired.value.revision == 50


def test_lists_expire_with_the_window_and_compaction_but_watches_do_not() -> None:
    """kube's cached lists expire with its compactor; its watches are served from the
    history whatever etcd compacted."""
    now = [0.0]
    cache = WatchCache(lambda: now[0])
    cache.load([], 1)
    _writes(cache, 2, 50)
    assert cache.trim(now[0] - 300.0) == 1  # nothing is older than the window yet
    now[0] = 400.0
    _writes(cache, 52, 10)
    assert cache.trim(now[0] - 300.0) == 51  # as of the last trim before the window
    with pytest.raises(StorageError):
        cache.get_list(b"/core/configmaps/", _at(50))
    assert len(cache.get_list(b"/core/configmaps/", _at(51)).items) == 7
    assert [e.revision for e in cache.events_since(1)] == list(range(2, 62))
    cache.expire_below(55)
    assert cache.list_floor == 55
    with pytest.raises(StorageError):
        cache.get_list(b"/core/configmaps/", _at(54))
    assert len(cache.events_since(1)) == 60


def _at(revision: int) -> ListOptions:
    return ListOptions(revision=revision)
