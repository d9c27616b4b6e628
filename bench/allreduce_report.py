#!/usr/bin/env python3
"""Turns the result lines of bench/allreduce_benchmark and
bench/allreduce_peer.py into one side-by-side table of all-reduce bus
bandwidth, with the issue's goals.

    allreduce_report.py ours.txt peers.txt [more files ...]

Lines read (others are ignored):

    allreduce impl=tensorgrid|tensorgrid_in_step|tensorgrid_own_client|tensorgrid_own_client_in_step|gloo|mpi|tcp_ring n=N bytes=B ... median_us=T ... busbw_GBps=X
    step impl=tensorgrid|tensorgrid_own_client n=N kind=empty ... median_us=T
    tcp bytes=B ... GBps=X
    skip impl=mpi ... reason=...

busbw is recomputed from median_us and bytes (the printed one is rounded).
When a figure appears more than once (several repetitions of the run), the
median of them is used. Goals: tensorgrid's busbw at or above gloo's at every
size, at or above MPI_Allreduce's (over TCP) at 64 MiB, and at least 70% of
the loopback TCP stream's bandwidth at 64 MiB. They are judged twice: for one
all-reduce per step ("step": the whole step's time, its overhead included) and
for all-reduces chained in one step ("in-step": the step's time divided by
their number, as the peers' back-to-back calls are timed). At 64 MiB the
table also gives each figure as a fraction of the TCP ring (impl=tcp_ring):
the bytes a ring all-reduce moves, moved by n processes over loopback TCP
with no arithmetic, the floor of any TCP all-reduce on the machine.

A second table gives the same all-reduces with each task's client in the
task's own process (impl=tensorgrid_own_client), as a MultiWorkerMirrored
worker steps its own server: there the step reaches the master with no
socket. Its goal is issue 19's: at or above MPI_Allreduce at every size.
"""
import collections
import statistics
import sys

from report import print_table  # bench/report.py, beside this file

TCP_GOAL = 0.70
LARGE = 64 << 20


def parse(paths):
    """figures[(impl, n, bytes)] = [(us, busbw GB/s), ...], empty[(impl, n)] = [us],
    tcp = [GB/s], skips = [line]."""
    figures = collections.defaultdict(list)
    empty = collections.defaultdict(list)
    tcp, skips = [], []
    for path in paths:
        with open(path) as f:
            for line in f:
                words = line.split()
                if not words:
                    continue
                kind = words[0]
                fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
                if kind == "allreduce":
                    n, b, us = int(fields["n"]), int(fields["bytes"]), float(fields["median_us"])
                    # From the time, not the printed busbw: full precision at 4 KiB too.
                    busbw = b / (us * 1e-6) / 1e9 * 2 * (n - 1) / n
                    figures[(fields["impl"], n, b)].append((us, busbw))
                elif kind == "step" and fields.get("kind") == "empty":
                    empty[(fields["impl"], int(fields["n"]))].append(float(fields["median_us"]))
                elif kind == "tcp":
                    tcp.append(float(fields["GBps"]))
                elif kind == "skip":
                    skips.append(line.strip()[len("skip "):])
    return figures, empty, tcp, skips


def median_figure(values):
    if not values:
        return None
    return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)


def size_name(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def show(figure):
    """'0.78 GB/s (335 us)' or '-'."""
    if figure is None:
        return "-"
    us, bw = figure
    time = f"{us / 1e3:.1f} ms" if us >= 10_000 else f"{us:.0f} us"
    return f"{bw:.3g} GB/s ({time})"


def main(paths):
    figures, empty, tcp, skips = parse(paths)
    tcp_gbps = statistics.median(tcp) if tcp else None
    keys = sorted({(n, b) for (impl, n, b) in figures if not impl.startswith("tensorgrid_own")})
    header = ("n", "size", "tensorgrid busbw: step", "in-step", "gloo busbw", "vs gloo", "MPI busbw",
              "vs MPI", "goals (step / in-step)")
    rows = []
    for n, b in keys:
        ours = median_figure(figures.get(("tensorgrid", n, b)))
        in_step = median_figure(figures.get(("tensorgrid_in_step", n, b)))
        gloo = median_figure(figures.get(("gloo", n, b)))
        mpi = median_figure(figures.get(("mpi", n, b)))
        ratio = lambda mine, peer: f"{mine[1] / peer[1]:.2f}x" if mine and peer else "-"
        ratios = lambda peer: f"{ratio(ours, peer)} / {ratio(in_step, peer)}"
        verdict = lambda ok: "met" if ok else "NOT met"
        both = lambda test: " / ".join(verdict(test(m)) if m else "-" for m in (ours, in_step))
        goals = []
        if gloo:
            goals.append(">= gloo " + both(lambda m: m[1] >= gloo[1]))
        if b == LARGE and mpi:
            goals.append(">= MPI " + both(lambda m: m[1] >= mpi[1]))
        if b == LARGE and tcp_gbps:
            xs = " / ".join(f"{m[1] / tcp_gbps:.2f}x" if m else "-" for m in (ours, in_step))
            goals.append(f"{xs} TCP, >= {TCP_GOAL:.2f}x " +
                         both(lambda m: m[1] / tcp_gbps >= TCP_GOAL))
        ring = median_figure(figures.get(("tcp_ring", n, b)))
        if b == LARGE and ring:
            xs = " / ".join(f"{m[1] / ring[1]:.2f}x" if m else "-" for m in (ours, in_step))
            goals.append(f"{xs} the TCP ring floor")
        rows.append((str(n), size_name(b), show(ours), show(in_step), show(gloo), ratios(gloo),
                     show(mpi), ratios(mpi), "; ".join(goals) or "-"))
    print_table(header, rows)
    print()
    runs = max((len(v) for v in figures.values()), default=0)
    print(f"busbw = algbw x 2(n-1)/n, algbw = bytes / median time of one all-reduce (the slowest")
    print(f"rank's, per iteration; in-step: a step of several chained all-reduces, divided by their")
    print(f"number); GB = 1e9 bytes; medians over {runs} run(s). vs: tensorgrid busbw (step / in-step) / peer's.")
    if tcp_gbps:
        print(f"loopback TCP stream, 64 MiB between two processes: {tcp_gbps:.2f} GB/s "
              f"(70% = {TCP_GOAL * tcp_gbps:.2f} GB/s)")
    for (impl, n, b), values in sorted(figures.items()):
        if impl != "tcp_ring":
            continue
        us, bw = median_figure(values)
        stream = f" ({bw / tcp_gbps:.2f}x the stream)" if tcp_gbps else ""
        print(f"TCP ring floor, n={n}: the bytes of a {size_name(b)} ring all-reduce moved with no "
              f"arithmetic in {us / 1e3:.1f} ms, busbw {bw:.3g} GB/s{stream}")
    for (impl, n) in sorted(empty):
        if impl == "tensorgrid":
            print(f"tensorgrid empty step (NoOp on every task, {n} concurrent clients): "
                  f"{statistics.median(empty[(impl, n)]):.0f} us, included in every 'step' time above")
    own_client_table(figures, empty)
    for s in skips:
        print(f"skipped: {s}")


def own_client_table(figures, empty):
    """The rows with each task's client in its own process, against MPI."""
    keys = sorted({(n, b) for (impl, n, b) in figures if impl == "tensorgrid_own_client"})
    if not keys:
        return
    print()
    print("Each task's client in the task's own process (as MultiWorkerMirrored workers run):")
    header = ("n", "size", "step", "in-step", "MPI", "vs MPI (step / in-step)", ">= MPI")
    rows = []
    for n, b in keys:
        ours = median_figure(figures.get(("tensorgrid_own_client", n, b)))
        in_step = median_figure(figures.get(("tensorgrid_own_client_in_step", n, b)))
        mpi = median_figure(figures.get(("mpi", n, b)))
        ratio = lambda mine: f"{mine[1] / mpi[1]:.2f}x" if mine and mpi else "-"
        verdict = lambda mine: ("met" if mine[1] >= mpi[1] else "NOT met") if mine and mpi else "-"
        rows.append((str(n), size_name(b), show(ours), show(in_step), show(mpi),
                     f"{ratio(ours)} / {ratio(in_step)}", f"{verdict(ours)} / {verdict(in_step)}"))
    print_table(header, rows)
    for (impl, n) in sorted(empty):
        if impl == "tensorgrid_own_client":
            print(f"its empty step (NoOp, {n} tasks): {statistics.median(empty[(impl, n)]):.1f} us")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
