"""The LMDB writer process: commits one server's writes outside its interpreter.

py-lmdb releases the GIL around every LMDB call, so a writer *thread* and the reactor
hand the GIL back and forth a dozen times per commit: each hand-off is a futex wake and
a context switch, and under load a commit waited longer for the GIL than for its fsync
(measured in the issue 13 notes: 0.16 ms of reactor CPU per create went there).  In a
process of its own the writer holds its interpreter alone and the reactor never waits.

The server (lmdb_process.py) spawns ``python -m platform_api.storage.lmdb_writer``
with the environment's path and map sizes, writes op frames to its stdin and reads
outcome frames from its stdout (lmdb_wire.py); log lines go to stderr.  Each turn takes
every frame that has arrived, commits them in one transaction (group commit, with the
store's own recovery: map growth, remaps, one transaction per op when a batch fails),
and answers.  End of input (the server stopped or died) ends the process.

With ``--listen NAME`` it is the one writer of a ``--workers`` supervisor
(lmdb_serve.py): the workers connect to it on an abstract Unix socket and their writes
share its transactions; its input is the supervisor's, kept open until the workers have
stopped.
"""

from __future__ import annotations

import argparse
import signal
import sys


def writer_command(path: str, map_size: int, map_ceiling: int, *extra: str) -> list[str]:
    """This process's command line (``extra``: ``--listen NAME`` for a shared one).  This
    module imports the store only when it runs: a supervisor builds the command."""
    return [
        sys.executable,
        "-m",
        "platform_api.storage.lmdb_writer",
        path,
        "--map-size",
        str(map_size),
        "--map-ceiling",
        str(map_ceiling),
        *extra,
    ]


def main(argv: list[str] | None = None) -> None:
    from twisted.logger import globalLogBeginner, textFileLogObserver  # noqa: PLC0415

    from platform_api.storage.lmdb_serve import (  # noqa: PLC0415
        listen,
        run_inline,
        serve,
        serve_shared,
    )
    from platform_api.storage.lmdb_store import LMDBStorage, open_environment  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="platform_api.storage.lmdb_writer")
    parser.add_argument("path")
    parser.add_argument("--map-size", type=int, required=True)
    parser.add_argument("--map-ceiling", type=int, required=True)
    parser.add_argument("--listen", help="the abstract Unix socket the workers connect to")
    args = parser.parse_args(argv)
    # Ctrl-C reaches the whole process group, and a service manager's stop signal the
    # whole cgroup: the server, still draining, ends this process itself (EOF).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    globalLogBeginner.beginLoggingTo([textFileLogObserver(sys.stderr)], redirectStandardIO=False)
    env = open_environment(args.path, args.map_size, args.map_ceiling)
    storage = LMDBStorage(env, run_inline, map_ceiling=args.map_ceiling)
    try:
        if args.listen:
            serve_shared(storage, listen(args.listen), sys.stdin.fileno())
        else:
            serve(storage, sys.stdin.fileno(), sys.stdout.fileno())
    finally:
        env.close()


if __name__ == "__main__":
    main()
