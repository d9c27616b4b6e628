#!/usr/bin/python3
"""A hostile peer against a real tg_server, from outside: raw sockets only.

Replays what a black-box attack on the bulk port found (issue 23) and checks
the bounds that now hold:
  - 1,024 connections that each promise a 1 GiB request and send nothing
    (from four loopback addresses, 256 each: the per-peer limit) leave the
    task's resident memory under a fixed bound, and the task keeps serving;
  - a connection that trickles its header a byte at a time is cut at the
    header deadline, not kept alive by each byte;
  - 3,000 RecvBuf requests with 4 KiB keys and an hour's wait whose clients
    hang up at once are withdrawn: memory comes back under the bound, and a
    later request for one of their keys is not refused as "wanted twice".

The bulk port is found the way an attacker would: the task's listening
sockets in /proc. Every wait is bounded; the server is killed at the end.

usage: attacker_test.py TG_SERVER
"""

import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

# What the task may hold, resident, while under attack (it starts near 20 MB;
# before the fix, 1,024 such connections took it to 1.08 GB).
RSS_BOUND = 400 << 20
HEADER_DEADLINE = 10  # seconds, BulkServer::Options::header_timeout
FAILURES = []


def check(condition, message):
    print(("ok: " if condition else "FAIL: ") + message, flush=True)
    if not condition:
        FAILURES.append(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def listening_ports(pid):
    """The TCP ports process `pid` listens on (its sockets in /proc/net/tcp*)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                        ports.add(int(fields[1].split(":")[1], 16))
        except FileNotFoundError:
            pass
    return ports


def call_header(method, declared, wait_ms=60000):
    """A TGC2 call's header (no token, any task) declaring `declared` bytes."""
    name = method.encode()
    return b"TGC2" + struct.pack("<IIIQQ", 0, 0, len(name), wait_ms, declared) + name


def recvbuf_request(key, wait_ms):
    """A TGR4 RecvBuf request (no token, any task, no in-place reads)."""
    return b"TGR4" + struct.pack("<IIIIQ", 0, 0, len(key), 0, wait_ms) + key


def connect(port, source=None, timeout=10):
    s = socket.socket()
    s.settimeout(timeout)
    if source:
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_by_peer(s, within):
    """Whether the server closes `s` within `within` seconds."""
    s.settimeout(within)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def read_answer_kind_and_error(s, timeout):
    """The first answer byte and, for an error answer, its message."""
    s.settimeout(timeout)
    kind = s.recv(1)
    if kind not in (b"\x02", b"\x04"):
        return kind, ""
    header = b""
    while len(header) < 8:
        header += s.recv(8 - len(header))
    code, body_len = struct.unpack("<II", header)
    body = b""
    while len(body) < body_len:
        body += s.recv(body_len - len(body))
    (message_len,) = struct.unpack("<I", body[:4])
    return kind, f"code {code}: " + body[4 : 4 + message_len].decode(errors="replace")


def main():
    tg_server = sys.argv[1]
    port = free_port()
    tmp = tempfile.mkdtemp()
    out = open(os.path.join(tmp, "server.out"), "w+")
    server = subprocess.Popen(
        [tg_server, f"--cluster=worker=127.0.0.1:{port}", "--job_name=worker"],
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            out.seek(0)
            if "tg_server ready" in out.read():
                break
            time.sleep(0.1)
        else:
            check(False, "tg_server became ready")
            return 1
        ports = listening_ports(server.pid) - {port}
        check(len(ports) == 1, f"the task listens on one bulk port beside gRPC: {ports}")
        bulk = ports.pop()
        baseline = rss(server.pid)
        print(f"resident at start: {baseline >> 20} MiB", flush=True)

        # 1. Promises of 1 GiB that never come, 1,024 of them.
        hostile = []
        for i in range(1024):
            source = f"127.0.0.{2 + i % 4}"
            try:
                s = connect(bulk, source)
                s.sendall(call_header("RunGraph", 1 << 30))
                hostile.append(s)
            except OSError as e:
                check(False, f"connection {i} from {source}: {e}")
                break
        time.sleep(2)
        held = rss(server.pid)
        print(f"resident with {len(hostile)} hostile connections: {held >> 20} MiB", flush=True)
        check(held < RSS_BOUND, f"resident memory {held >> 20} MiB < {RSS_BOUND >> 20} MiB")
        # One address cannot take more than its share: a 257th connection
        # from it is closed at once.
        extra = connect(bulk, "127.0.0.2")
        check(closed_by_peer(extra, 30), "a 257th connection from one address is closed at once")
        extra.close()
        # With one address's connections gone, a new peer is answered (a
        # refusal unread, as nothing serves "NoSuchMethod": the port answers).
        for s in hostile[0::4]:
            s.close()
        time.sleep(1)
        probe = connect(bulk, "127.0.0.9")
        probe.sendall(call_header("NoSuchMethod", 0))
        kind, error = read_answer_kind_and_error(probe, 30)
        check(kind == b"\x04" and "serves no NoSuchMethod" in error,
              f"a fresh peer is answered while they wait: {kind!r} {error}")
        probe.close()
        for i, s in enumerate(hostile):
            if i % 4 != 0:
                s.close()

        # 2. A header trickled a byte at a time.
        s = connect(bulk)
        start = time.time()
        cut = False
        for byte in call_header("RunGraph", 16):
            try:
                s.send(bytes([byte]))
            except OSError:
                cut = True
                break
            if closed_by_peer(s, 1.0):
                cut = True
                break
        if not cut:
            cut = closed_by_peer(s, HEADER_DEADLINE + 20)
        took = time.time() - start
        check(cut and took < HEADER_DEADLINE + 20,
              f"a trickling header is cut at its deadline ({took:.1f} s)")
        s.close()

        # 3. Abandoned waits: 3,000 RecvBufs of 4 KiB keys, an hour each.
        keys = [(b"k%05d" % i) + b"x" * 4090 for i in range(3000)]
        for i in range(0, len(keys), 200):
            batch = []
            for key in keys[i : i + 200]:
                s = connect(bulk, f"127.0.0.{2 + (i // 200) % 4}")
                s.sendall(recvbuf_request(key, 3600 * 1000))
                batch.append(s)
            time.sleep(0.05)
            for s in batch:
                s.close()
        time.sleep(2)  # hang-ups are seen within ~100 ms
        after = rss(server.pid)
        print(f"resident after 3,000 abandoned waits: {after >> 20} MiB", flush=True)
        check(after < RSS_BOUND, f"resident memory {after >> 20} MiB < {RSS_BOUND >> 20} MiB")
        s = connect(bulk)
        s.sendall(recvbuf_request(keys[17], 1000))  # nobody produces it: 1 s
        kind, error = read_answer_kind_and_error(s, 30)
        s.close()
        check(kind == b"\x02" and "wanted twice" not in error and "code 4:" in error,
              f"the key of an abandoned wait is free (DeadlineExceeded, not 'wanted twice'): "
              f"{error[:80]}...")

        check(server.poll() is None, "the task is still running")
    finally:
        server.kill()
        server.wait(timeout=30)
    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
