"""The etcd backend's watch cache as it grows: CPU per create, per delete and per list chunk.

    python benchmarks/watchcachebench.py [--sizes 10000,100000,1000000] [--events 5000]

Fills a WatchCache (storage/etcd/cache.py) with N ConfigMap keys in one namespace, then
applies ``--events`` creates of new keys spread over the range, the deletes of those
keys, and reads 100 first chunks of 500 of the namespace (what a paged ``kubectl get``
costs the cache), then 20 chunks of 500 from the middle of the namespace as of a
revision 100 writes ago (a paged list that reads on while writes go on).  Prints
microseconds per operation for each N.  Every replica does the writes' part for every
write on etcd, whichever replica made it.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from platform_api.storage.etcd.cache import WatchCache  # noqa: E402
from platform_api.storage.interface import (  # noqa: E402
    ADDED,
    DELETED,
    MODIFIED,
    Event,
    ListOptions,
    Stored,
)

PREFIX = b"/core/configmaps/bench/"


def _key(i: int, suffix: bytes = b"") -> bytes:
    return PREFIX + b"cm-%08d" % i + suffix


def measure(size: int, events: int) -> tuple[float, float, float, float]:
    """Microseconds per create, per delete, per 500-object chunk and per such chunk at
    an older revision, at ``size`` keys."""
    value = b'{"metadata":{"name":"x"}}'
    cache = WatchCache(lambda: 0.0)
    cache.load([Stored(_key(i), 1, value) for i in range(size)], 1)
    picks = [random.randrange(size) for _ in range(events)]
    new = [_key(i, b"-%d" % n) for n, i in enumerate(picks)]
    revision = 1
    started = time.perf_counter()
    for key in new:
        revision += 1
        stored = Stored(key, revision, value)
        cache.apply([Event(ADDED, revision, key, stored, None)], revision)
    create = (time.perf_counter() - started) / events * 1e6
    started = time.perf_counter()
    for key in new:
        revision += 1
        last = cache.data[key]
        cache.apply([Event(DELETED, revision, key, last, last)], revision)
    delete = (time.perf_counter() - started) / events * 1e6
    started = time.perf_counter()
    for _ in range(100):
        result = cache.get_list(PREFIX, ListOptions(limit=500))
        assert len(result.items) == min(500, size)
    chunk = (time.perf_counter() - started) / 100 * 1e6
    past = revision
    for i in random.sample(range(size), 100):
        revision += 1
        stored = Stored(_key(i), revision, value)
        cache.apply([Event(MODIFIED, revision, _key(i), stored, cache.data[_key(i)])], revision)
    cache.advance(revision)
    middle = ListOptions(past, _key(size // 2), 500)
    started = time.perf_counter()
    for _ in range(20):
        assert len(cache.get_list(PREFIX, middle).items) == min(500, size - size // 2 - 1)
    older = (time.perf_counter() - started) / 20 * 1e6
    return create, delete, chunk, older


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--events", type=int, default=5000)
    args = parser.parse_args()
    head = f"{'objects':>9} {'create µs':>10} {'delete µs':>10} {'chunk of 500 µs':>16}"
    print(head, f"{'older chunk µs':>15}")
    for size in (int(s) for s in args.sizes.split(",")):
        create, delete, chunk, older = measure(size, args.events)
        print(f"{size:>9} {create:>10.1f} {delete:>10.1f} {chunk:>16.0f} {older:>15.0f}")


if __name__ == "__main__":
    main()
