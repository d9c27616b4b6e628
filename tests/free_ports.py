"""Loopback ports for tests and scripts that start servers on them.

    python3 tests/free_ports.py N          # N distinct free ports, one line
    python3 tests/free_ports.py --range N  # a base B with B..B+N-1 all free

or, from Python, `free_ports(n)` and `free_port_range(n)`.

Ports come from below the kernel's ephemeral range when there is room, as
core/platform/free_port.cc picks them: the kernel never hands those out by
itself, so no outgoing connection (tasks keep up to 256 per peer) and no
server binding port 0 can take one between the pick and its user's bind.
A port the kernel picked (bind to port 0) is free only until the next
connection anyone makes.
"""

import random
import socket
import sys


def _below_ephemeral():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return (max(1024, low - 12000), low - 1) if low >= 4096 else None


def _bind_all(ports):
    socks = []
    try:
        for port in ports:
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", port))
    except OSError:
        return False
    finally:
        for s in socks:
            s.close()
    return True


def free_ports(n):
    """n distinct ports nobody listens on right now."""
    span, ports = _below_ephemeral(), []
    for _ in range(200 if span else 0):
        if len(ports) == n:
            break
        port = random.randint(*span)
        if port not in ports and _bind_all([port]):
            ports.append(port)
    socks = []
    while len(ports) < n:  # the range is crowded (or unknown): the kernel picks
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        if s.getsockname()[1] not in ports:
            ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def free_port():
    return free_ports(1)[0]


def free_port_range(n):
    """A port B such that B..B+n-1 are all free right now (for launchers
    that number ports from a base, as Slurm's --port_base)."""
    first, last = _below_ephemeral() or (20000, 60000)
    for _ in range(200):
        base = random.randint(first, last - n + 1)
        if _bind_all(range(base, base + n)):
            return base
    raise RuntimeError("no range of %d free ports found" % n)


def main(argv):
    usage = "usage: free_ports.py N | free_ports.py --range N"
    try:
        if len(argv) == 2 and argv[0] == "--range":
            print(free_port_range(int(argv[1])))
        elif len(argv) == 1:
            print(" ".join(str(p) for p in free_ports(int(argv[0]))))
        else:
            sys.exit(usage)
    except ValueError:
        sys.exit(usage)
    except RuntimeError as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main(sys.argv[1:])
