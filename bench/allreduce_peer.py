#!/usr/bin/python3
"""The peers of bench/allreduce_benchmark: all-reduce bus bandwidth of
torch.distributed (gloo) and, where OpenMPI is installed, MPI_Allreduce over
TCP, plus the plain loopback TCP bandwidth they all share, measured in one run.

    /usr/bin/python3 bench/allreduce_peer.py [--ranks=2,4] [--sizes=4096,...] > peers.txt

Run with Debian's python3-torch (apt-get install python3-torch); the MPI
peer needs openmpi-bin and libopenmpi-dev (optional: without mpirun/mpicc it
prints a skip line saying so). Every process runs on 127.0.0.1.

Method, the same as allreduce_benchmark's: float32 tensors of each size
(bytes), a few untimed warm-up all-reduces, then K all-reduces back to back,
each timed on every rank; an iteration's time is the slowest rank's, and the
figure is the median over the K iterations. algbw = bytes / time and
busbw = algbw * 2 (n - 1) / n (GB = 1e9 bytes), as nccl-tests define them.

Output, one result a line (bench/allreduce_report.py reads them):

    allreduce impl=gloo n=2 bytes=4096 iterations=200 median_us=250.3 algbw_GBps=0.0164 busbw_GBps=0.0164
    tcp bytes=67108864 iterations=9 median_us=20012.0 GBps=3.353
    allreduce impl=tcp_ring n=4 bytes=67108864 iterations=9 median_us=120000.0 ...
    skip impl=mpi reason=no mpirun on PATH (apt-get install openmpi-bin libopenmpi-dev)

Every child is bounded (--timeout seconds per peer and rank count) and
killed if it is still there at the end.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from free_ports import free_port  # noqa: E402  (tests/free_ports.py)

SIZES = [4096, 256 << 10, 4 << 20, 64 << 20]


def iterations(nbytes):
    """(warm-up, timed) all-reduces for a size; allreduce_benchmark uses the same."""
    if nbytes <= 64 << 10:
        return 20, 200
    if nbytes <= 1 << 20:
        return 10, 50
    if nbytes <= 16 << 20:
        return 3, 20
    return 2, 9


def result_line(impl, n, nbytes, k, seconds):
    algbw = nbytes / seconds / 1e9
    busbw = algbw * 2 * (n - 1) / n
    return (f"allreduce impl={impl} n={n} bytes={nbytes} iterations={k} "
            f"median_us={seconds * 1e6:.1f} algbw_GBps={algbw:.4f} busbw_GBps={busbw:.4f}")


# ---- torch.distributed, gloo ------------------------------------------------------

def gloo_rank(rank, n, port, sizes, queue):
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # one core's worth per rank, as our tasks' reductions
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=n)
    lines = []
    for nbytes in sizes:
        warm_up, k = iterations(nbytes)
        x = torch.ones(nbytes // 4, dtype=torch.float32)
        for _ in range(warm_up):
            dist.all_reduce(x)
        times = torch.zeros(k, dtype=torch.float64)
        for i in range(k):
            start = time.perf_counter()
            dist.all_reduce(x)
            times[i] = time.perf_counter() - start
        dist.all_reduce(times, op=dist.ReduceOp.MAX)  # the slowest rank's, per iteration
        lines.append(result_line("gloo", n, nbytes, k, statistics.median(times.tolist())))
    if rank == 0:
        queue.put(lines)
    dist.destroy_process_group()


def run_gloo(n, sizes, timeout):
    try:
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except Exception as e:  # ImportError, or a broken install
        return [f"skip impl=gloo n={n} reason=cannot import torch.distributed: {e}"]
    if not dist.is_available() or not dist.is_gloo_available():
        return [f"skip impl=gloo n={n} reason=torch built without gloo"]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=gloo_rank, args=(r, n, port, sizes, queue)) for r in range(n)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + timeout
    try:
        lines = queue.get(timeout=timeout)
    except Exception:
        lines = None
    for p in procs:
        p.join(max(1.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    if lines is None:
        codes = [p.exitcode for p in procs]
        return [f"skip impl=gloo n={n} reason=did not finish in {timeout:g} s (exit codes {codes})"]
    return lines


# ---- MPI_Allreduce over TCP (optional) --------------------------------------------

def build_mpi(work_dir):
    """Compiles bench/allreduce_mpi.c; returns (binary, None) or (None, reason)."""
    if shutil.which("mpirun") is None or shutil.which("mpicc") is None:
        return None, "no mpirun/mpicc on PATH (apt-get install openmpi-bin libopenmpi-dev)"
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "allreduce_mpi.c")
    binary = os.path.join(work_dir, "allreduce_mpi")
    build = subprocess.run(["mpicc", "-O2", "-o", binary, source], capture_output=True, text=True)
    if build.returncode != 0:
        last = (build.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"mpicc failed: {last}"
    return binary, None


def run_mpi(binary, n, sizes, timeout):
    command = ["mpirun", "-np", str(n), "--oversubscribe", "--bind-to", "none",
               # TCP over loopback only: no shared memory (vader), no UCX.
               "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
               "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    command += [binary] + [str(s) for s in sizes]
    for nbytes in sizes:
        warm_up, k = iterations(nbytes)
        command += [f"{warm_up}:{k}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # subprocess.run kills mpirun
        return [f"skip impl=mpi n={n} reason=did not finish in {timeout:g} s"]
    lines = [l for l in done.stdout.splitlines() if l.startswith("allreduce ")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"skip impl=mpi n={n} reason=mpirun exited {done.returncode}: {tail}"]
    return lines


# ---- plain loopback TCP ------------------------------------------------------------

def recv_exactly(sock, view, nbytes, who):
    """Reads `nbytes` from `sock` into the memoryview `view`; `who` names the
    sender if it closes first."""
    got = 0
    while got < nbytes:
        r = sock.recv_into(view[got:], nbytes - got)
        if r == 0:
            raise ConnectionError(f"{who} closed the connection")
        got += r


def measure_tcp(nbytes, warm_up=2, k=9):
    """One process writes `nbytes` from memory to a connected loopback socket,
    this one reads them into a reused buffer (after an 8-byte request, timed
    too); the median time of one transfer."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(60)  # the writer gives up if we never connect
    port = listener.getsockname()[1]
    pid = os.fork()
    if pid == 0:  # the writer
        status = 1
        try:
            conn, _ = listener.accept()
            conn.settimeout(None)
            payload = b"\x5a" * nbytes
            while len(conn.recv(8, socket.MSG_WAITALL)) == 8:
                conn.sendall(payload)
            status = 0
        finally:
            os._exit(status)
    listener.close()
    times = []
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            buffer = bytearray(nbytes)
            view = memoryview(buffer)
            for i in range(warm_up + k):
                start = time.perf_counter()
                sock.sendall(b"\0" * 8)
                recv_exactly(sock, view, nbytes, "the writer")
                if i >= warm_up:
                    times.append(time.perf_counter() - start)
    finally:
        os.waitpid(pid, 0)
    median = statistics.median(times)
    return f"tcp bytes={nbytes} iterations={k} median_us={median * 1e6:.1f} GBps={nbytes / median / 1e9:.4f}"


def measure_tcp_ring(n, nbytes, warm_up=2, k=9):
    """The bytes a ring all-reduce of `nbytes` moves, with no arithmetic: n
    processes in a ring, each sending 2(n-1)/n * nbytes from memory to the
    next while reading as many from the previous one, over loopback TCP. The
    floor of any TCP ring all-reduce on this machine. The median over the
    iterations of the slowest rank's time."""
    share = nbytes * 2 * (n - 1) // n
    listeners = []
    for _ in range(n):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(60)
        listeners.append(listener)
    ports = [l.getsockname()[1] for l in listeners]
    reader, writer = os.pipe()
    pids = []
    for rank in range(n):
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.close(reader)
                nxt = socket.create_connection(("127.0.0.1", ports[(rank + 1) % n]), timeout=60)
                prev, _ = listeners[rank].accept()
                for sock in (nxt, prev):
                    sock.settimeout(60)
                payload = b"\x5a" * share
                buffer = bytearray(share)
                view = memoryview(buffer)
                times = []
                for i in range(warm_up + k):
                    start = time.perf_counter()
                    sender = threading.Thread(target=nxt.sendall, args=(payload,))
                    sender.start()
                    recv_exactly(prev, view, share, "a ring neighbour")
                    sender.join()
                    times.append(time.perf_counter() - start)
                os.write(writer, (" ".join(f"{t:.9f}" for t in times[warm_up:]) + "\n").encode())
                status = 0
            finally:
                os._exit(status)
        pids.append(pid)
    os.close(writer)
    for listener in listeners:
        listener.close()
    with os.fdopen(reader) as results:
        per_rank = [list(map(float, line.split())) for line in results]
    for pid in pids:
        os.waitpid(pid, 0)
    if len(per_rank) != n:
        return f"skip impl=tcp_ring n={n} reason=a ring process failed"
    slowest = [max(times) for times in zip(*per_rank)]
    median = statistics.median(slowest)
    return result_line("tcp_ring", n, nbytes, k, median)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="2,4", help="process counts, comma-separated")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="bytes, comma-separated")
    parser.add_argument("--peers", default="tcp,gloo,mpi", help="which of tcp, gloo, mpi to run")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per peer and rank count")
    args = parser.parse_args()
    ranks = [int(r) for r in args.ranks.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    peers = args.peers.split(",")

    def emit(lines):
        for line in lines:
            print(line, flush=True)

    if "tcp" in peers:
        emit([measure_tcp(64 << 20)])
        for n in ranks:
            emit([measure_tcp_ring(n, 64 << 20)])
    if "gloo" in peers:
        for n in ranks:
            print(f"running gloo, {n} processes ...", file=sys.stderr, flush=True)
            emit(run_gloo(n, sizes, args.timeout))
    if "mpi" in peers:
        with tempfile.TemporaryDirectory(prefix="allreduce_mpi.") as work_dir:
            binary, reason = build_mpi(work_dir)
            if binary is None:
                emit([f"skip impl=mpi reason={reason}"])
            else:
                for n in ranks:
                    print(f"running MPI_Allreduce, {n} processes ...", file=sys.stderr, flush=True)
                    emit(run_mpi(binary, n, sizes, args.timeout))


if __name__ == "__main__":
    main()
