#!/usr/bin/python3
"""The peer for distributed_step_benchmark: torch.distributed.rpc's rpc_sync
of a tiny function between two processes on 127.0.0.1, median microseconds.

    /usr/bin/python3 bench/torch_rpc_peer.py [--calls=2000] [--repetitions=9] > torch_rpc.json

Run with Debian's python3-torch (apt-get install python3-torch). Rank 0 calls
rank 1's `add_one(1)` with rpc_sync; each repetition times `calls` calls in a
row, after 200 untimed warm-up calls, and reports microseconds per call. The
result is one JSON object on stdout:

    {"available": true, "median_us": 180.2, "repetitions_us": [...],
     "backend": "TENSORPIPE", "torch": "1.13.0a0", ...}

or, when torch or its RPC module cannot be used, {"available": false,
"reason": "..."} and exit status 0, so that bench/report.py can say why.
Both processes are bounded (--timeout seconds, default 120) and the parent
kills the child if it is still there at the end.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from free_ports import free_port  # noqa: E402  (tests/free_ports.py)


def add_one(x):
    return x + 1


def worker(rank, port, args, queue):
    # Loopback only, for both the rendezvous (init_method) and TensorPipe's
    # sockets; otherwise TensorPipe picks the address the host name resolves to.
    os.environ["TP_SOCKET_IFNAME"] = "lo"
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    import torch.distributed.rpc as rpc

    options = rpc.TensorPipeRpcBackendOptions(
        init_method=f"tcp://127.0.0.1:{port}", num_worker_threads=2, rpc_timeout=args.timeout)
    rpc.init_rpc(f"rank{rank}", rank=rank, world_size=2, rpc_backend_options=options)
    if rank == 0:
        for _ in range(200):
            rpc.rpc_sync("rank1", add_one, args=(1,))
        repetitions = []
        for _ in range(args.repetitions):
            start = time.perf_counter()
            for _ in range(args.calls):
                rpc.rpc_sync("rank1", add_one, args=(1,))
            repetitions.append((time.perf_counter() - start) / args.calls * 1e6)
        queue.put(repetitions)
    rpc.shutdown()  # waits for the other rank: rank 1 serves until rank 0 is done


def measure(args):
    try:
        import torch
        import torch.distributed.rpc as rpc
        import torch.multiprocessing as mp
    except Exception as e:  # ImportError, or a broken install
        return {"available": False, "reason": f"cannot import torch.distributed.rpc: {e}"}
    if not rpc.is_available():
        return {"available": False,
                "reason": f"torch {torch.__version__} was built without distributed RPC"}
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(rank, port, args, queue)) for rank in (0, 1)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + args.timeout
    try:
        repetitions = queue.get(timeout=args.timeout)
    except Exception:
        repetitions = None
    for p in procs:
        p.join(max(1.0, deadline - time.monotonic()))
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    if repetitions is None:
        return {"available": False,
                "reason": f"rpc_sync did not finish in {args.timeout} s (exit codes {failed})"}
    return {
        "available": True,
        "median_us": statistics.median(repetitions),
        "repetitions_us": repetitions,
        "calls_per_repetition": args.calls,
        "backend": "TENSORPIPE",
        "torch": torch.__version__,
        "python": sys.version.split()[0],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repetitions", type=int, default=9)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    print(json.dumps(measure(args)))


if __name__ == "__main__":
    main()
