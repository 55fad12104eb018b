"""new_uid: RFC 4122 version 4 text, as uuid.uuid4() would print it."""

from __future__ import annotations

import os
import re
import threading
import uuid

from platform_api.uid import new_uid

_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_uids_are_version_4_and_distinct() -> None:
    seen = {new_uid() for _ in range(10_000)}
    assert len(seen) == 10_000
    for text in list(seen)[:500]:
        assert _TEXT.match(text), text
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)


def test_uids_drawn_from_threads_and_a_forked_child_are_distinct() -> None:
    """The random pool is shared by threads and forgotten by a forked child."""
    out: list[str] = []

    def draw() -> None:
        out.extend(new_uid() for _ in range(2000))

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 8000
    new_uid()  # the pool now holds bytes the child must not reuse
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next uid and leave at once
        os.write(write, new_uid().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    assert child != new_uid()
