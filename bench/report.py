#!/usr/bin/env python3
"""Turns the JSON of bench/*_benchmark into one plain-text table.

    report.py [--torch_rpc=torch_rpc.json] [--own_socket=distributed_step_socket.json] \
        session.json executor.json matmul.json \
        distributed_step.json recv_tensor.json

--torch_rpc is the output of bench/torch_rpc_peer.py (a JSON object with
"available" and "median_us", or "reason" when torch rpc could not run).

Every figure is the median of the benchmark's repetitions. The ratio column
is tensorgrid's speed over the peer's, both timed in this run (> 1:
tensorgrid is faster). TensorFlow's figures are references, as reported
elsewhere and not measured here: they get a column of their own and no ratio.
"""
import json
import os
import sys

TF_SESSION_RUN_US = 90.0  # TensorFlow 1.x session.run of a trivial graph (reference only)
TF_DISTRIBUTED_STEP_US = 1800.0  # TensorFlow's distributed null step (reference only)
NULL_STEP_GOAL_X = 3.0  # the goal: a distributed null step <= 3x a raw gRPC ping-pong
RECV_TENSOR_GOAL = 0.70  # the goal: RecvTensor of 64 MiB >= 70% of a TCP stream's GB/s
TF_RECV_TENSOR_GBPS = "0.6-0.8"  # TensorFlow's gRPC RecvTensor as reported (reference only)


def load_medians(paths):
    """Medians by benchmark name, the first file's context, and per file the
    range of coefficients of variation across repetitions."""
    medians, context, spread = {}, None, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        context = context or data.get("context", {})
        cvs = [b["real_time"] for b in data["benchmarks"] if b.get("aggregate_name") == "cv"]
        if cvs:
            spread[path] = (min(cvs), max(cvs))
        for b in data["benchmarks"]:
            if b.get("aggregate_name") != "median":
                continue
            # "BM_X/pool:2/repeats:5/real_time" -> "BM_X/pool:2"
            name = b["run_name"].split("/repeats:")[0]
            medians[name] = b
    return medians, context, spread


def to_us(b):
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
    return b["real_time"] * scale


def ns_per_node(b):
    return b["node_time"] * 1e9  # the counter is seconds per node


def gflops(b):
    return b["FLOPS"] / 1e9


def load_torch_rpc(path):
    """The torch rpc_sync peer's result, or why there is none."""
    if path is None:
        return {"available": False, "reason": "not run (no --torch_rpc)"}
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"available": False, "reason": f"cannot read {path}: {e}"}


def distributed_rows(m, torch_rpc, own_socket, rows):
    """Null step rows: against the same binary's gRPC ping-pong (goal <= 3x),
    torch rpc_sync (goal: faster) and TensorFlow's ~1.8 ms (reference)."""
    ping = to_us(m["BM_GrpcPingPong"])
    rows.append(("raw gRPC unary ping-pong (2 processes)", f"{ping:.1f} us", "-", "-", "-", "-"))

    def vs_ping(label, name, goal, reference="-"):
        us = to_us(m[name])
        x = us / ping
        met = " (met)" if x <= NULL_STEP_GOAL_X else " (NOT met)"
        rows.append((label, f"{us:.1f} us", f"gRPC ping-pong {ping:.1f} us", f"{ping / us:.2f}x",
                     reference, f"<= {NULL_STEP_GOAL_X:g}x ping-pong: {x:.1f}x{met}" if goal else
                     f"- ({x:.1f}x ping-pong)"))

    # Two raw hops in a row (client -> relay -> echo): the floor of a null step.
    if "BM_GrpcRelay" in m:
        vs_ping("raw gRPC relay, 2 hops (3 processes)", "BM_GrpcRelay", False)
        vs_ping("raw gRPC relay, callback API forward", "BM_GrpcRelayCallback", False)
    vs_ping("null step, Session::Run (3 processes)", "BM_NullStep_SessionRun", True,
            f"TF distributed null step ~{TF_DISTRIBUTED_STEP_US:g} us")
    vs_ping("null step, callable (3 processes)", "BM_NullStep_RunCallable", True)
    vs_ping("null step, callable, master on the ps", "BM_NullStep_MasterOnPs", False)
    # The master in the client's own process: no socket, against the same
    # step through the loopback socket (the binary run with TG_BULK_IN_PROCESS=0).
    if "BM_NullStep_OwnProcess" in m:
        us = to_us(m["BM_NullStep_OwnProcess"])
        socket = own_socket.get("BM_NullStep_OwnProcess")
        peer = f"through the socket {to_us(socket):.1f} us" if socket else "socket run missing"
        ratio = f"{to_us(socket) / us:.1f}x" if socket else "-"
        rows.append(("null step, callable, master in this process", f"{us:.1f} us", peer, ratio,
                     "-", "-"))
    # A step reading N variables from the ps: what each variable beyond the
    # first adds (one transfer each; connections reused from step to step).
    one = m.get("BM_ReadVariables/1")
    for n in (8, 32, 128):
        many = m.get(f"BM_ReadVariables/{n}")
        if one and many:
            extra = (to_us(many) - to_us(one)) / (n - 1)
            rows.append((f"step reading {n} variables from the ps", f"{to_us(many):.1f} us",
                         f"reading 1: {to_us(one):.1f} us", "-", "-",
                         f"- ({extra:.1f} us per variable more)"))
    callable_us = to_us(m["BM_NullStep_RunCallable"])
    if torch_rpc.get("available"):
        peer = torch_rpc["median_us"]
        met = "met" if callable_us < peer else "NOT met"
        rows.append(("null step, callable vs torch rpc_sync", f"{callable_us:.1f} us",
                     f"torch rpc_sync {peer:.1f} us", f"{peer / callable_us:.2f}x", "-",
                     f"faster than rpc_sync ({met})"))
    else:
        rows.append(("null step, callable vs torch rpc_sync", f"{callable_us:.1f} us",
                     "torch rpc_sync: not available", "-", "-", "-"))


def gbps(b):
    return b["bytes_per_second"] / 1e9


def recv_tensor_rows(m, rows):
    """RecvTensor between two processes against a TCP stream of the same
    bytes (goal >= 70%) and a plain gRPC call with a bytes field."""
    large, small = "bytes:67108864", "bytes:4096"
    ours, tcp, plain = (m[f"{n}/{large}"] for n in ("BM_RecvTensor", "BM_TcpStream", "BM_GrpcBytesField"))
    ratio = gbps(ours) / gbps(tcp)
    met = "met" if ratio >= RECV_TENSOR_GOAL else "NOT met"
    rows.append(("RecvTensor 64 MiB f32 (2 processes)", f"{gbps(ours):.2f} GB/s",
                 f"TCP stream {gbps(tcp):.2f} GB/s", f"{ratio:.2f}x",
                 f"TF gRPC RecvTensor ~{TF_RECV_TENSOR_GBPS} GB/s",
                 f">= {RECV_TENSOR_GOAL:.2f}x TCP ({met})"))
    in_grpc = m.get(f"BM_RecvTensorInGrpc/{large}")
    if in_grpc is not None:  # the bytes inside gRPC's answer instead of by ticket
        ratio = gbps(in_grpc) / gbps(tcp)
        rows.append(("RecvTensor 64 MiB, bulk port off", f"{gbps(in_grpc):.2f} GB/s",
                     f"TCP stream {gbps(tcp):.2f} GB/s", f"{ratio:.2f}x", "-",
                     "- (for comparison)"))
    rows.append(("RecvTensor 64 MiB vs plain gRPC", f"{gbps(ours):.2f} GB/s",
                 f"gRPC bytes field {gbps(plain):.2f} GB/s", f"{gbps(ours) / gbps(plain):.2f}x", "-",
                 "-"))
    ours, tcp, plain = (m[f"{n}/{small}"] for n in ("BM_RecvTensor", "BM_TcpStream", "BM_GrpcBytesField"))
    rows.append(("RecvTensor 4 KiB f32 (latency)", f"{to_us(ours):.1f} us",
                 f"gRPC bytes field {to_us(plain):.1f} us", f"{to_us(plain) / to_us(ours):.2f}x",
                 "-", f"- (TCP {to_us(tcp):.1f} us)"))


def print_table(header, rows):
    """One line per row, columns padded to the widest cell, a rule under the header."""
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: " | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
    print(line(header))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def main(args):
    torch_path = None
    own_socket = {}
    paths = []
    for a in args:
        if a.startswith("--torch_rpc="):
            torch_path = a[len("--torch_rpc="):]
        elif a.startswith("--own_socket="):
            own_socket = load_medians([a[len("--own_socket="):]])[0]
        else:
            paths.append(a)
    torch_rpc = load_torch_rpc(torch_path)
    m, context, spread = load_medians(paths)
    rows = []

    def get(name):
        if name not in m:
            raise SystemExit(f"report.py: no median for {name} in {paths}")
        return m[name]

    def step_row(label, name, goal_us):
        us = to_us(get(name))
        goal = "-" if goal_us is None else f"<= {goal_us:g} us"
        met = "" if goal_us is None else (" (met)" if us <= goal_us else " (NOT met)")
        rows.append((label, f"{us:.2f} us", "-", "-", f"TF 1.x session.run ~{TF_SESSION_RUN_US:g} us",
                     goal + met))

    step_row("Session::Run step, 1 node (fed Identity)", "BM_SessionRun_Identity1", None)
    step_row("callable step, 1 node (fed Identity)", "BM_RunCallable_Identity1", 5)
    step_row("Session::Run step, 1 node (Const)", "BM_SessionRun_Const1", None)
    step_row("callable step, 1 node (Const)", "BM_RunCallable_Const1", 5)
    step_row("Session::Run step, 10-node chain", "BM_SessionRun_Chain10", None)
    step_row("callable step, 10-node chain", "BM_RunCallable_Chain10", 5)

    def node_row(label, ours, peer, peer_label):
        a, b = ns_per_node(get(ours)), ns_per_node(get(peer))
        met = "met" if a <= b else "NOT met"
        rows.append((label, f"{a:.1f} ns/node", f"{peer_label} {b:.1f} ns/node", f"{b / a:.2f}x",
                     "-", f"<= TBB ({met})"))

    node_row("executor, 100k NoOp chain, pool 2", "BM_Executor_Chain/pool:2", "BM_Tbb_Chain/threads:2",
             "TBB flow_graph 2 thr")
    node_row("executor, 100k NoOp chain, no pool", "BM_Executor_Chain/pool:0", "BM_Tbb_Chain/threads:1",
             "TBB flow_graph 1 thr")
    node_row("executor, 10k fan-out/in, pool 2", "BM_Executor_Fan/pool:2", "BM_Tbb_Fan/threads:2",
             "TBB flow_graph 2 thr")
    node_row("executor, 10k fan-out/in, no pool", "BM_Executor_Fan/pool:0", "BM_Tbb_Fan/threads:1",
             "TBB flow_graph 1 thr")

    def flops_row(label, ours, peer, peer_label):
        a, b = gflops(get(ours)), gflops(get(peer))
        met = "met" if a >= 0.95 * b else "NOT met"
        rows.append((label, f"{a:.1f} GFLOP/s", f"{peer_label} {b:.1f} GFLOP/s", f"{a / b:.2f}x",
                     "-", f">= 0.95x Eigen ({met})"))

    flops_row("MatMul 1024 f32, 1 intra-op thread", "BM_Session_MatMul/threads:1",
              "BM_EigenTensor_MatMul/threads:1", "Eigen Tensor 1 thr")
    flops_row("MatMul 1024 f32, 2 intra-op threads", "BM_Session_MatMul/threads:2",
              "BM_EigenTensor_MatMul/threads:2", "Eigen Tensor 2 thr")
    flops_row("MatMul 1024 f32, 1 intra-op thread", "BM_Session_MatMul/threads:1",
              "BM_EigenMatrix_MatMul/threads:1", "Eigen::Matrix 1 thr")

    distributed = "BM_GrpcPingPong" in m
    if distributed:
        distributed_rows(m, torch_rpc, own_socket, rows)

    recv_tensor = "BM_RecvTensor/bytes:67108864" in m
    if recv_tensor:
        recv_tensor_rows(m, rows)

    header = ("benchmark", "tensorgrid", "peer, timed in this run", "ratio",
              "reference, not measured here", "goal")
    print_table(header, rows)
    print()
    print("medians of 9 repetitions, wall time; ratio = tensorgrid speed / peer speed (> 1: tensorgrid")
    print("faster). References get no ratio: TF ~90 us is TensorFlow 1.x session.run as commonly")
    print("reported (its Python front end included), not measured here.")
    print("goals (the project's): <= 5 us per callable step; executor ns/node at or below TBB's;")
    print("MatMul through a session >= 0.95x the same Eigen call. tensorgrid turns off Abseil's")
    print("debug deadlock detection (Debian builds Abseil without NDEBUG); see docs/PERFORMANCE.md.")
    if distributed:
        print("null step: client -> master on worker 0 -> scalar variable on the ps, each task its own")
        print(f"process on 127.0.0.1; goal <= {NULL_STEP_GOAL_X:g}x the same binary's gRPC ping-pong and faster than")
        print(f"torch rpc_sync. TF ~{TF_DISTRIBUTED_STEP_US:g} us is TensorFlow's distributed null step as reported, not measured here.")
        if torch_rpc.get("available"):
            print(f"torch rpc_sync: torch {torch_rpc.get('torch')}, {torch_rpc.get('backend')}, median of "
                  f"{len(torch_rpc.get('repetitions_us', []))} repetitions of "
                  f"{torch_rpc.get('calls_per_repetition')} calls")
        else:
            print(f"torch rpc_sync: not available: {torch_rpc.get('reason')}")
    if recv_tensor:
        print("RecvTensor: GB/s = 1e9 bytes/s, the transfer call alone timed (median of 9); TCP stream and")
        print("the plain gRPC call (a protobuf bytes field) move the same bytes between the same processes")
        print(f"in the same run. TensorFlow's gRPC RecvTensor reached ~{TF_RECV_TENSOR_GBPS} GB/s as reported, not measured here.")
    if spread:
        print("spread across repetitions (cv of wall time): " + "; ".join(
            f"{os.path.basename(p)} {lo * 100:.0f}-{hi * 100:.0f}%" for p, (lo, hi) in spread.items()))
    if context:
        print(f"host as benchmark saw it: {context.get('num_cpus')} CPUs at {context.get('mhz_per_cpu')} MHz; "
              f"libbenchmark build type: {context.get('library_build_type')}")

if __name__ == "__main__":
    main(sys.argv[1:])
