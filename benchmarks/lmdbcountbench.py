"""LMDB's object counts as a namespace grows: what a count and a paged list's first chunk
cost with the counts the commits keep, against walking the keys (the stale-counts path,
and every count before the counts were kept).

    python benchmarks/lmdbcountbench.py [--sizes 10000,100000,1000000]

Writes N ~200-byte ConfigMaps into one namespace in a fresh environment (raw, in large
transactions: the counts are then stale, as after ``migrate-storage``), opens it as the
server does (which counts them again: timed), then times ``count`` of the namespace and
of the resource (each ``/metrics`` scrape counts every resource; priority and fairness
every ``--etcd-count-metric-poll-period``) and the first chunk of 500 with its
``remainingItemCount``; then makes the counts stale with one more raw write and times
the same walked.  Milliseconds, the median of 9.  Last, a whole paged list (chunks of
500, each at the first chunk's revision, as ``kubectl get`` pages) with each chunk's
count of the keys left taken from the chunk before, against walked for every chunk.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import lmdb

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from platform_api.storage.interface import ListOptions  # noqa: E402
from platform_api.storage.lmdb_commit import REV  # noqa: E402
from platform_api.storage.lmdb_store import LMDBStorage, open_environment  # noqa: E402

NAMESPACE = b"/core/configmaps/bench/"
RESOURCE = b"/core/configmaps/"
VALUE = (
    b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"a":"'
    + (b"x" * 150)
    + b'"}}'
)


def _fill(env: lmdb.Environment, n: int, start: int = 0) -> None:
    objects, meta = env.open_db(b"objects"), env.open_db(b"meta")
    step = 50_000
    for base in range(start, start + n, step):
        with env.begin(write=True) as txn:
            raw = txn.get(b"rev", db=meta)
            revision = REV.unpack(raw)[0] if raw else 0
            for i in range(base, min(start + n, base + step)):
                revision += 1
                txn.put(NAMESPACE + b"cm-%08d" % i, REV.pack(revision) + VALUE, db=objects)
            txn.put(b"rev", REV.pack(revision), db=meta)


def _ms(work: Callable[[], Any], rounds: int = 9) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _row(storage: LMDBStorage) -> tuple[float, float, float]:
    first = ListOptions(limit=500)
    return (
        _ms(lambda: storage.count(NAMESPACE)),
        _ms(lambda: storage.count(RESOURCE)),
        _ms(lambda: storage.get_list(NAMESPACE, first)),
    )


def _page(storage: LMDBStorage, walk: bool) -> None:
    chunk = storage.get_list(NAMESPACE, ListOptions(limit=500))
    while chunk.continue_key is not None:
        if walk:
            storage._left.clear()  # as before the chunks passed the count on
        chunk = storage.get_list(NAMESPACE, ListOptions(chunk.revision, chunk.continue_key, 500))


def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(pathlib.Path(tmp) / "db")
        map_size = max(64 * 2**20, n * 600)
        open_environment(path, map_size).close()
        env = lmdb.open(path, max_dbs=4, subdir=True, map_size=map_size)
        _fill(env, n)
        env.close()
        started = time.perf_counter()
        env = open_environment(path, map_size)
        opened = (time.perf_counter() - started) * 1000
        storage = LMDBStorage(env, lambda work: work())
        kept = _row(storage)
        rounds = 3 if n <= 100_000 else 1
        paged = _ms(lambda: _page(storage, walk=False), rounds)
        # (quadratic: ~140 s of walking at a million)
        walking = n <= 300_000
        paged_walking = _ms(lambda: _page(storage, walk=True), rounds) if walking else math.nan
        _fill(env, 1, start=n)  # one raw write more: the counts are stale, reads walk
        walked = _row(storage)
        assert storage.count(NAMESPACE) == n + 1
        env.close()
    print(
        f"{n:>9}  open (counting) {opened:8.1f}   namespace count {kept[0]:7.3f} / {walked[0]:8.2f}"
        f"   resource count {kept[1]:7.3f} / {walked[1]:8.2f}"
        f"   first chunk of 500 {kept[2]:6.2f} / {walked[2]:8.2f}"
        f"   paged through {paged:9.1f} / {paged_walking:10.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    args = parser.parse_args()
    print("objects   ms: kept counts / walked")
    for n in (int(s) for s in args.sizes.split(",")):
        run(n)


if __name__ == "__main__":
    main()
