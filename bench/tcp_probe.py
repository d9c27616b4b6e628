"""Plain TCP yardsticks between two hosts (network namespaces), for
bench/run_netns.sh. One side serves, the other measures and prints:

  tcp_probe.py serve HOST PORT        answers both probes below, one connection
  tcp_probe.py stream HOST PORT       median bytes/s of 3 transfers of 64 MiB
                                      (a 1-byte request, then the server sendall()s)
  tcp_probe.py rtt HOST PORT          median round trip in microseconds: 1 byte
                                      each way, TCP_NODELAY, 2,000 after 200 warm-up
"""
import socket
import statistics
import sys
import time

STREAM_BYTES = 64 << 20


def serve(host, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(1)
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = b"\0" * STREAM_BYTES
    while True:
        request = c.recv(1)
        if not request:
            return
        c.sendall(data if request == b"s" else b"y")


def connect(host, port):
    for _ in range(200):
        try:
            c = socket.create_connection((host, port))
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return c
        except OSError:
            time.sleep(0.05)
    sys.exit(f"tcp_probe: cannot connect to {host}:{port}")


def stream(c):
    buf = bytearray(1 << 20)
    rates = []
    for _ in range(3):
        start = time.perf_counter()
        c.sendall(b"s")
        got = 0
        while got < STREAM_BYTES:
            got += c.recv_into(buf)
        rates.append(STREAM_BYTES / (time.perf_counter() - start))
    return statistics.median(rates)


def rtt(c):
    times = []
    for i in range(2200):
        start = time.perf_counter()
        c.sendall(b"r")
        c.recv(1)
        if i >= 200:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main():
    mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "serve":
        serve(host, port)
        return
    c = connect(host, port)
    print(stream(c) if mode == "stream" else rtt(c))


if __name__ == "__main__":
    main()
