"""The benchmarks' HTTP/1.1 client reads what servers send: sized, chunked and split bodies."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.loadgen import Wire, machine_busy

ROOT = Path(__file__).parent.parent


class Script:
    """A socket that answers with fixed bytes, ``step`` at a time, and keeps what was sent."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.sent = data, step, b""

    def sendall(self, data: bytes) -> None:
        self.sent += data

    def recv_into(self, buffer: Any) -> int:
        n = min(self.step, len(buffer), len(self.data))
        buffer[:n], self.data = self.data[:n], self.data[n:]
        return n


def wire(data: bytes, step: int = 7) -> tuple[Wire, Script]:
    sock = Script(data, step)
    return Wire(sock, "Host: h\r\nAccept: application/json\r\n"), sock  # type: ignore[arg-type]


def test_request_head_and_sized_bodies_back_to_back() -> None:
    answers = (
        b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        b"HTTP/1.1 404 Not Found\r\ncontent-length: 5\r\n\r\nnope\n"
    )
    client, sock = wire(answers)
    assert client.request("POST", "/api/v1/x", b'{"a":1}') == (201, b"{}")
    assert client.request("GET", "/api/v1/x/y") == (404, b"nope\n")
    assert sock.sent == (
        b"POST /api/v1/x HTTP/1.1\r\nHost: h\r\nAccept: application/json\r\n"
        b"Content-Type: application/json\r\nContent-Length: 7\r\n\r\n"
        b'{"a":1}'
        b"GET /api/v1/x/y HTTP/1.1\r\nHost: h\r\nAccept: application/json\r\n\r\n"
    )


def test_chunked_body_then_the_next_response() -> None:
    answers = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    )
    client, _ = wire(answers, step=3)
    assert client.request("GET", "/a") == (200, b"hello world")
    assert client.request("GET", "/b") == (200, b"")


def test_a_large_body_arrives_in_pieces() -> None:
    body = bytes(range(256)) * 4096
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    client, _ = wire(answer, step=16384)
    status, got = client.request("GET", "/big", None)
    assert (status, bytes(got)) == (200, body)


def test_a_patch_names_its_content_type() -> None:
    client, sock = wire(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    client.request("PATCH", "/p", b"{}", "application/merge-patch+json")
    assert b"Content-Type: application/merge-patch+json\r\nContent-Length: 2\r\n\r\n{}" in sock.sent


def test_machine_busy_counts_the_cpu_this_process_spends() -> None:
    before, spent = machine_busy(), time.process_time()
    while time.process_time() - spent < 0.3:
        pass
    assert machine_busy() - before >= 0.2  # ticks of 10 ms; other processes only add


def test_scratch_dirs_are_gone_when_the_benchmark_exits() -> None:
    """A benchmark's server data and the clients' key files do not pile up in /tmp: the
    directory goes when its process exits, after the forked clients that read it."""
    script = (
        "import multiprocessing as mp, os, sys\n"
        "from benchmarks.loadgen import scratch_dir\n"
        "path = scratch_dir('loadgen-test-')\n"
        "open(os.path.join(path, 'client.key'), 'w').close()\n"
        "child = mp.get_context('fork').Process(target=os.path.exists, args=(path,))\n"
        "child.start(); child.join()\n"
        "print(path, os.path.exists(os.path.join(path, 'client.key')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    path, kept_while_alive = done.stdout.split()
    assert kept_while_alive == "True"
    assert not os.path.exists(path)
