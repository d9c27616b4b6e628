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

Then the gRPC port of a second task, one with a token, from an independent
client (Debian's python3-grpcio) and from raw HTTP/2 frames:
  - a 512 MiB RunGraph without the token is UNAUTHENTICATED, and the task's
    resident memory does not grow by its body (it is refused unread);
  - garbage to each of the 21 methods without the token, or with a wrong
    one, is UNAUTHENTICATED, not INVALID_ARGUMENT (nothing is parsed first);
  - a request over --max_request_bytes from a caller with the token is
    RESOURCE_EXHAUSTED;
  - a frame that declares a 0xFFFFFFFF-byte message and never sends it is
    ended at --request_timeout_seconds with DEADLINE_EXCEEDED (and at once,
    UNAUTHENTICATED, without the token).

The bulk port is found the way an attacker would: the task's listening
sockets in /proc. Every wait is bounded; the servers are killed at the end.

usage: attacker_test.py TG_SERVER
"""

import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from free_ports import free_port  # noqa: E402  (beside this file)

try:
    import grpc  # Debian's python3-grpcio (scripts/setup.sh installs it)
except ImportError:
    grpc = None

# What the task may hold, resident, while under attack (it starts near 20 MB;
# before the fix, 1,024 such connections took it to 1.08 GB).
RSS_BOUND = 400 << 20
HEADER_DEADLINE = 10  # seconds, BulkServer::Options::header_timeout
# The gRPC task's limits (flags), and how much its resident memory may grow
# while a 512 MiB request without the token is refused (before, it read
# about 300 MB of it first, and kept it).
MAX_REQUEST_BYTES = 64 << 20
REQUEST_TIMEOUT = 2  # seconds
UNREAD_GROWTH_BOUND = 64 << 20
TOKEN = "attacker-test-token"
MASTER_METHODS = ["CreateSession", "ExtendSession", "RunStep", "MakeCallable", "RunCallable",
                  "ReleaseCallable", "CloseSession", "ListDevices", "Reset"]
WORKER_METHODS = ["GetStatus", "CreateWorkerSession", "DeleteWorkerSession", "RegisterGraph",
                  "DeregisterGraph", "RunGraph", "CleanupGraph", "RecvTensor", "CleanupAll",
                  "CompleteGroup", "CompleteInstance", "RecvBuf"]
METHODS = (["/tensorgrid.MasterService/" + m for m in MASTER_METHODS] +
           ["/tensorgrid.WorkerService/" + m for m in WORKER_METHODS])
RUN_GRAPH = "/tensorgrid.WorkerService/RunGraph"
FAILURES = []


def check(condition, message):
    print(("ok: " if condition else "FAIL: ") + message, flush=True)
    if not condition:
        FAILURES.append(message)


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
    """A TGR5 RecvBuf request (no token, any task, no in-place reads)."""
    return b"TGR5" + struct.pack("<IIIIQ", 0, 0, len(key), 0, wait_ms) + key


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


def start_server(tg_server, tmp, name, flags=()):
    """A one-task tg_server on a free port, once it says it is ready (30 s at
    most): (process, port), or (None, port) after a failed check."""
    port = free_port()
    out = open(os.path.join(tmp, name + ".out"), "w+")
    server = subprocess.Popen(
        [tg_server, f"--cluster=worker=127.0.0.1:{port}", "--job_name=worker", *flags],
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        out.seek(0)
        if "tg_server ready" in out.read():
            return server, port
        if server.poll() is not None:
            break
        time.sleep(0.1)
    out.seek(0)
    check(False, f"tg_server ({name}) became ready: {out.read()[-500:]}")
    server.kill()
    server.wait(timeout=30)
    return None, port


def main():
    tg_server = sys.argv[1]
    tmp = tempfile.mkdtemp()
    server, port = start_server(tg_server, tmp, "bulk")
    if server is None:
        return 1
    try:
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

    grpc_attacks(tg_server, tmp)
    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if not n:
            return out + bytes([byte])
        out += bytes([byte | 0x80])


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def run_graph_request(feed_bytes):
    """A tensorgrid.RunGraphRequest feeding one float tensor of `feed_bytes`."""
    shape = field(2, varint(1 << 3) + varint(feed_bytes // 4))  # dim { size }
    head = varint(1 << 3) + varint(1) + field(2, shape)  # dtype: DT_FLOAT, tensor_shape
    tensor_head = head + varint(4 << 3 | 2) + varint(feed_bytes)  # tensor_content's prefix
    named_head = field(1, b"0") + varint(2 << 3 | 2) + varint(len(tensor_head) + feed_bytes)
    request_head = (field(1, b"graph") + varint(3 << 3 | 2) +
                    varint(len(named_head) + len(tensor_head) + feed_bytes))
    return request_head + named_head + tensor_head + bytes(feed_bytes)


def grpc_code(method, body, channel, token=None):
    """The status code of a unary call of `method` with raw bytes `body`."""
    metadata = [("authorization", "Bearer " + token)] if token else None
    try:
        channel.unary_unary(method)(body, metadata=metadata, timeout=120)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details()


def peak_rss_during(pid, action):
    """Runs `action`; returns (its result, the most `pid` held resident
    above what it held before, sampled every 10 ms)."""
    before = rss(pid)
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss(pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = action()
    finally:
        done.set()
        sampler.join()
    return result, max(peak[0], rss(pid)) - before


def h2_frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(name, value):
    """A header field as an HPACK literal without indexing, no Huffman."""
    assert len(name) < 127 and len(value) < 127
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def recv_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return data


def unsent_message_call(port, token, within):
    """Opens a RunGraph call over raw HTTP/2 whose only DATA is a gRPC
    message prefix declaring 0xFFFFFFFF bytes, then waits up to `within`
    seconds for the server to end the call. Returns how it ended: "status N"
    (its trailers' grpc-status), "reset", "closed", or "open"."""
    headers = b"".join(hpack_literal(n, v) for n, v in [
        (b":method", b"POST"), (b":scheme", b"http"), (b":path", RUN_GRAPH.encode()),
        (b":authority", f"127.0.0.1:{port}".encode()), (b"content-type", b"application/grpc"),
        (b"te", b"trailers")] + ([(b"authorization", b"Bearer " + token.encode())] if token else []))
    s = connect(port)
    try:
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0) +
                  h2_frame(1, 0x4, 1, headers) +              # HEADERS, END_HEADERS
                  h2_frame(0, 0, 1, b"\x00\xff\xff\xff\xff"))  # DATA: the prefix alone
        deadline = time.time() + within
        while time.time() < deadline:
            s.settimeout(max(0.1, deadline - time.time()))
            try:
                length, kind, flags, stream = struct.unpack(">IBBI", b"\x00" + recv_exactly(s, 9))
                payload = recv_exactly(s, length)
            except socket.timeout:
                break
            except (ConnectionError, OSError):
                return "closed"
            if kind == 4 and not flags & 0x1:  # SETTINGS: acknowledge
                s.sendall(h2_frame(4, 0x1, 0))
            elif kind == 6 and not flags & 0x1:  # PING: answer
                s.sendall(h2_frame(6, 0x1, 0, payload))
            elif kind == 3 and stream == 1:  # RST_STREAM
                return "reset"
            elif kind == 7:  # GOAWAY
                return "closed"
            elif kind == 1 and stream == 1 and flags & 0x1:  # trailers: the call's end
                # gRPC's HPACK encoder writes literals without Huffman coding.
                m = re.search(rb"grpc-status([\x01-\x02])(\d+)", payload)
                return f"status {int(m.group(2))}" if m else "status ?"
        return "open"
    finally:
        s.close()


def grpc_attacks(tg_server, tmp):
    if grpc is None:
        check(False, "python3-grpcio is installed (scripts/setup.sh installs it)")
        return
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    server, port = start_server(tg_server, tmp, "grpc", [
        f"--auth_token_file={token_file}", f"--max_request_bytes={MAX_REQUEST_BYTES}",
        f"--request_timeout_seconds={REQUEST_TIMEOUT}"])
    if server is None:
        return
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
        ("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)])
    try:
        code, details = grpc_code("/tensorgrid.WorkerService/GetStatus", b"", channel, TOKEN)
        check(code == grpc.StatusCode.OK, f"GetStatus with the token is OK: {code} {details}")
        print(f"resident at start: {rss(server.pid) >> 20} MiB", flush=True)

        # 1. 512 MiB without the token.
        body = run_graph_request(512 << 20)
        (code, details), growth = peak_rss_during(
            server.pid, lambda: grpc_code(RUN_GRAPH, body, channel))
        del body
        check(code == grpc.StatusCode.UNAUTHENTICATED,
              f"a 512 MiB RunGraph without the token is UNAUTHENTICATED: {code} {details}")
        check(growth < UNREAD_GROWTH_BOUND,
              f"... and the task's resident memory grew by {growth >> 20} MiB "
              f"< {UNREAD_GROWTH_BOUND >> 20} MiB while it was refused")

        # 2. Garbage to every method, without the token and with a wrong one.
        garbage = b"\xff\xff\xff\xff\x0f\x12garbage\x00\x01"
        for token in (None, "guess"):
            wrong = [(m, code, details) for m in METHODS
                     for code, details in [grpc_code(m, garbage, channel, token)]
                     if code != grpc.StatusCode.UNAUTHENTICATED]
            check(not wrong, f"garbage to all {len(METHODS)} methods with "
                  f"{'no token' if token is None else 'a wrong token'} is UNAUTHENTICATED: "
                  f"{wrong[:3]}")
        code, details = grpc_code(RUN_GRAPH, garbage, channel, TOKEN)
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "not a valid message" in details,
              f"the same garbage with the token is INVALID_ARGUMENT: {code} {details}")

        # 3. A few bytes over the limit, with the token.
        code, details = grpc_code(RUN_GRAPH, run_graph_request(MAX_REQUEST_BYTES), channel, TOKEN)
        check(code == grpc.StatusCode.RESOURCE_EXHAUSTED,
              f"a request over --max_request_bytes is RESOURCE_EXHAUSTED: {code} {details}")

        # 4. A message declared and never sent.
        ended = unsent_message_call(port, TOKEN, REQUEST_TIMEOUT + 60)
        check(ended == "status 4",
              f"a declared 0xFFFFFFFF-byte message that never comes is ended "
              f"DEADLINE_EXCEEDED (grpc-status 4) at --request_timeout_seconds: {ended}")
        ended = unsent_message_call(port, None, 60)
        check(ended == "status 16",
              f"... and without the token, UNAUTHENTICATED (grpc-status 16): {ended}")

        code, details = grpc_code("/tensorgrid.WorkerService/GetStatus", b"", channel, TOKEN)
        check(code == grpc.StatusCode.OK and server.poll() is None,
              f"the task still serves: {code} {details}")
        print(f"resident at the end: {rss(server.pid) >> 20} MiB", flush=True)
    finally:
        channel.close()
        server.kill()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
