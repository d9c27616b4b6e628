#!/usr/bin/env bash
# All-reduce across simulated hosts on 1 Gbit/s links (issue 22, item 9):
# N tg_server tasks (/job:worker/task:0..N-1), each in a network namespace
# of its own (tests/netns_lib.sh: a bridge namespace, no default route, no
# packet can leave), every veth shaped at both ends with `tc ... tbf rate
# RATE`; bench/allreduce_benchmark --tasks runs in one more namespace on the
# bridge and measures CollectiveReduce across the tasks, N = 2 and 4.
# A TCP stream between two hosts (python3: one connection, SIZE bytes) gives
# what the shaped link carries; the goal is bus bandwidth >= 0.9x the link
# rate at 64 MiB.
#
# Then the distributed null step across hosts (bench/distributed_step_benchmark's
# BM_NullStep_RunCallable: the client in its namespace, the master on a
# worker task on h0, the variable on a ps task on h1) against the same step
# with every process on loopback, and TCP round trips (1 byte each way,
# TCP_NODELAY, median of 2000) client <-> h0, h0 <-> h1 and on loopback,
# each the median of ROUNDS (default 3) interleaved rounds. The
# goal: across hosts <= 1.2 x (the two hops' round trips) + the step's own
# cost on loopback (the loopback step less its two loopback round trips).
# Needs root.
#
#   bench/run_netns.sh                       # 2 and 4 hosts, 64 MiB, 1gbit: about 2 minutes
#   RATE=2gbit RANKS="2" SIZES=4194304,67108864 bench/run_netns.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RATE="${RATE:-1gbit}"
RANKS="${RANKS:-2 4}"
SIZES="${SIZES:-67108864}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-netns.XXXXXX)}"
TMP="$OUT_DIR"
mkdir -p "$OUT_DIR"
[[ $(id -u) -eq 0 ]] || { echo "run_netns: network namespaces need root" >&2; exit 1; }

if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //bench:allreduce_benchmark //bench:distributed_step_benchmark \
    //tools:tg_server >"$OUT_DIR/build.log" 2>&1 ||
    { tail -40 "$OUT_DIR/build.log"; exit 1; }
fi
BIN_DIR="${BIN_DIR:-$(bazel info --config=opt bazel-bin 2>/dev/null)}"

skip_test() { echo "run_netns: $*" >&2; exit 1; }
# shellcheck source=tests/cluster_lib.sh
source tests/cluster_lib.sh
# shellcheck source=tests/netns_lib.sh
source tests/netns_lib.sh
trap 'set +e; kill_servers; netns_delete' EXIT

netns_hosts client h0 h1 h2 h3
for h in client h0 h1 h2 h3; do
  ip netns exec "${NS[$h]}" tc qdisc add dev eth0 root tbf rate "$RATE" burst 256kb latency 20ms &&
    ip netns exec "$BR" tc qdisc add dev "$h" root tbf rate "$RATE" burst 256kb latency 20ms ||
    { echo "run_netns: shaping $h's link" >&2; exit 1; }
done

# probe SERVER_HOST CLIENT_HOST MODE: bench/tcp_probe.py's stream or rtt from
# CLIENT_HOST to SERVER_HOST ("lo-client": loopback in the client's namespace).
probe() {
  local server_ns=${NS[$1]:-${NS[client]}} address=${ADDR[$1]:-127.0.0.1}
  ip netns exec "$server_ns" timeout 120 python3 bench/tcp_probe.py serve "$address" 5002 &
  local server=$!
  ip netns exec "${NS[$2]}" timeout 120 python3 bench/tcp_probe.py "$3" "$address" 5002
  wait "$server"
}
# The TCP stream h1 -> h0: what the shaped link carries (median of 3).
STREAM=$(probe h1 h0 stream)

results="$OUT_DIR/allreduce.txt"
: >"$results"
for n in $RANKS; do
  hosts=(h0 h1 h2 h3)
  tasks=""
  for ((i = 0; i < n; i++)); do tasks+="${tasks:+,}${ADDR[${hosts[i]}]}:2222"; done
  PIDS=()
  for ((i = 0; i < n; i++)); do
    ip netns exec "${NS[${hosts[i]}]}" "$BIN_DIR/tools/tg_server" --cluster="worker=$tasks" \
      --job_name=worker --task_index="$i" >"$OUT_DIR/task$n-$i.out" 2>"$OUT_DIR/task$n-$i.err" &
    PIDS+=($!)
    wait_ready "task$n-$i" "$!" || exit 1
  done
  echo "all-reduce across $n hosts ($tasks) ..." >&2
  ip netns exec "${NS[client]}" "$BIN_DIR/bench/allreduce_benchmark" --tasks="$tasks" \
    --sizes="$SIZES" --timeout_s=900 >>"$results" 2>"$OUT_DIR/allreduce$n.err" ||
    { cat "$OUT_DIR/allreduce$n.err"; exit 1; }
  stop_servers
done

# The null step: across hosts, then every process on loopback (in the client's namespace).
null_step() {  # [FLAGS...]: the median of BM_NullStep_RunCallable in µs
  ip netns exec "${NS[client]}" "$BIN_DIR/bench/distributed_step_benchmark" "$@" \
    --benchmark_filter=BM_NullStep_RunCallable --benchmark_format=json 2>>"$OUT_DIR/step.err" |
    python3 -c 'import json, sys; print(next(b["real_time"] for b in json.load(sys.stdin)["benchmarks"] if b["name"].endswith("_median")))'
}
PIDS=()
for t in "h1 ps" "h0 worker"; do
  read -r h job <<<"$t"
  ip netns exec "${NS[$h]}" "$BIN_DIR/tools/tg_server" --cluster="ps=${ADDR[h1]}:2222;worker=${ADDR[h0]}:2222" \
    --job_name="$job" --task_index=0 >"$OUT_DIR/step-$job.out" 2>"$OUT_DIR/step-$job.err" &
  PIDS+=($!)
  wait_ready "step-$job" "$!" || exit 1
done
# ROUNDS rounds, each measuring everything once; the medians are used (wake-up
# latencies on a small VM make single figures swing by 3x).
median() { tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
r_c_h0=() r_h0_h1=() r_lo=() s_hosts=() s_lo=()
for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
  echo "null step and round trips, round $round ..." >&2
  r_c_h0+=("$(probe h0 client rtt)")
  r_h0_h1+=("$(probe h1 h0 rtt)")
  r_lo+=("$(probe lo-client client rtt)")
  s_hosts+=("$(null_step --worker_target="grpc://${ADDR[h0]}:2222" --ps_target="grpc://${ADDR[h1]}:2222")")
  s_lo+=("$(null_step)")
done
stop_servers
RTT_C_H0=$(echo "${r_c_h0[*]}" | median)
RTT_H0_H1=$(echo "${r_h0_h1[*]}" | median)
RTT_LO=$(echo "${r_lo[*]}" | median)
STEP_HOSTS=$(echo "${s_hosts[*]}" | median)
STEP_LO=$(echo "${s_lo[*]}" | median)
echo "rounds: round trips client-h0 [${r_c_h0[*]}] h0-h1 [${r_h0_h1[*]}] loopback [${r_lo[*]}] us;" \
  "null step across hosts [${s_hosts[*]}] loopback [${s_lo[*]}] us" >"$OUT_DIR/rounds.txt"

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'): $(nproc) cores;" \
  "every link tbf $RATE at both ends; load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$STREAM" "$RATE" "$RTT_C_H0" "$RTT_H0_H1" "$RTT_LO" "$STEP_HOSTS" "$STEP_LO" <<'EOF'
import re, sys
path, stream, rate = sys.argv[1], float(sys.argv[2]), sys.argv[3]
rtt_c_h0, rtt_h0_h1, rtt_lo, step_hosts, step_lo = map(float, sys.argv[4:9])
m = re.fullmatch(r"([\d.]+)([kmg]?)bit", rate)
link = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)] / 8
print(f"link {rate} = {link / 1e6:.1f} MB/s; TCP stream between two hosts {stream / 1e6:.1f} MB/s "
      f"({stream / link:.2f} of the link)")
print()
print("| hosts | bytes | form | median | busbw | of the link | of the TCP stream | goal >= 0.9 of the link |")
print("|---|---|---|---|---|---|---|---|")
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    if not line.startswith("allreduce"):
        continue
    bus = float(f["busbw_GBps"]) * 1e9
    form = "in-step" if f["impl"].endswith("in_step") else "step"
    print(f"| {f['n']} | {int(f['bytes']):,} | {form} | {float(f['median_us']) / 1e3:.1f} ms | "
          f"{bus / 1e6:.1f} MB/s | {bus / link:.2f} | {bus / stream:.2f} | "
          f"{'met' if bus >= 0.9 * link else 'NOT met'} |")
own = step_lo - 2 * rtt_lo
bound = 1.2 * (rtt_c_h0 + rtt_h0_h1) + own
print()
print(f"TCP round trips: client <-> h0 {rtt_c_h0:.1f} us, h0 <-> h1 {rtt_h0_h1:.1f} us, loopback {rtt_lo:.1f} us")
print(f"null step (callable), median: across hosts {step_hosts:.1f} us; on loopback {step_lo:.1f} us, "
      f"of which its own cost {own:.1f} us (less 2 loopback round trips)")
print(f"goal: <= 1.2 x ({rtt_c_h0:.1f} + {rtt_h0_h1:.1f}) + {own:.1f} = {bound:.1f} us: "
      f"{'met' if step_hosts <= bound else 'NOT met'} ({step_hosts / bound:.2f} of it)")
EOF
cat "$OUT_DIR/rounds.txt"
echo
echo "raw results: $OUT_DIR"
