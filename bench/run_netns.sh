#!/usr/bin/env bash
# All-reduce across simulated hosts on 1 Gbit/s links (issue 22, item 9):
# N tg_server tasks (/job:worker/task:0..N-1), each in a network namespace
# of its own (tests/netns_lib.sh: a bridge namespace, no default route, no
# packet can leave), every veth shaped at both ends with `tc ... tbf rate
# RATE`; bench/allreduce_benchmark --tasks runs in one more namespace on the
# bridge and measures CollectiveReduce across the tasks, N = 2 and 4.
# A TCP stream between two hosts (python3: one connection, SIZE bytes) gives
# what the shaped link carries; the goal is bus bandwidth >= 0.9x the link
# rate at 64 MiB. Needs root.
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
  bazel build --config=opt //bench:allreduce_benchmark //tools:tg_server >"$OUT_DIR/build.log" 2>&1 ||
    { tail -40 "$OUT_DIR/build.log"; exit 1; }
fi
BIN_DIR="${BIN_DIR:-$(bazel info --config=opt bazel-bin 2>/dev/null)}"

skip_test() { echo "run_netns: $*" >&2; exit 1; }
# shellcheck source=tests/cluster_lib.sh
source tests/cluster_lib.sh
# shellcheck source=tests/netns_lib.sh
source tests/netns_lib.sh
trap 'kill_servers; netns_delete' EXIT

netns_hosts client h0 h1 h2 h3
for h in client h0 h1 h2 h3; do
  ip netns exec "${NS[$h]}" tc qdisc add dev eth0 root tbf rate "$RATE" burst 256kb latency 20ms &&
    ip netns exec "$BR" tc qdisc add dev "$h" root tbf rate "$RATE" burst 256kb latency 20ms ||
    { echo "run_netns: shaping $h's link" >&2; exit 1; }
done

# The TCP stream h1 -> h0: what the shaped link carries (median of 3).
cat >"$OUT_DIR/stream.py" <<'PY'
import socket, statistics, sys, time
role, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
size, reps = 64 << 20, 3
if role == "send":
    s = socket.socket()
    s.bind((host, port))
    s.listen(1)
    c, _ = s.accept()
    data = b"\0" * size
    for _ in range(reps):
        c.recv(1)
        c.sendall(data)
else:
    for _ in range(100):
        try:
            c = socket.create_connection((host, port))
            break
        except OSError:
            time.sleep(0.05)
    buf = bytearray(1 << 20)
    rates = []
    for _ in range(reps):
        start = time.perf_counter()
        c.sendall(b"x")
        got = 0
        while got < size:
            got += c.recv_into(buf)
        rates.append(size / (time.perf_counter() - start))
    print(statistics.median(rates))
PY
ip netns exec "${NS[h1]}" timeout 120 /usr/bin/python3 "$OUT_DIR/stream.py" send "${ADDR[h1]}" 5001 &
sender=$!
STREAM=$(ip netns exec "${NS[h0]}" timeout 120 /usr/bin/python3 "$OUT_DIR/stream.py" recv "${ADDR[h1]}" 5001)
wait "$sender"

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

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'): $(nproc) cores;" \
  "every link tbf $RATE at both ends; load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$STREAM" "$RATE" <<'EOF'
import re, sys
path, stream, rate = sys.argv[1], float(sys.argv[2]), sys.argv[3]
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
EOF
echo
echo "raw results: $OUT_DIR"
