#!/bin/bash
# Training across simulated hosts (issue 22, items 7a and 7d): every task in
# a network namespace of its own (tests/netns_lib.sh: a bridge namespace, no
# default route anywhere, nothing in the machine's own namespace), bound to
# its own address on port 2222:
#
#   namespace ps: 10.231.Z.1     namespace w0: 10.231.Z.2     namespace w1: 10.231.Z.3
#
#  1. Clean links: examples/distributed_fashion_mnist, 1 ps + 2 workers,
#     asynchronous and then synchronous (--is_sync), STEPS global steps:
#     every task exits 0 and the chief's test accuracy is above 0.6 (chance
#     is 0.1); examples/multi_worker_fashion_mnist on w0 and w1 (one epoch,
#     60 steps of 2 x 500): both workers print the same loss and accuracy.
#  2. Every link shaped like a 1 Gbit/s Ethernet that loses 1% of packets:
#     `tc qdisc ... tbf rate 1gbit` on both ends of every veth, and an
#     nftables rule in every host's namespace that drops 1 in 100 packets
#     leaving its eth0 (`numgen random mod 100 < 1`, counted). The same
#     MultiWorkerMirrored run gives exactly the clean run's loss and accuracy
#     (all-reduce results are exact: retransmission loses nothing), async
#     training still converges, and every namespace's counter shows drops.
#
# Needs root and nftables (skips otherwise). Every wait is bounded; an EXIT
# trap kills every task and deletes the namespaces.
#
# Usage: netns_training_test.sh DISTRIBUTED_EXAMPLE MULTI_WORKER_EXAMPLE
#          CLUSTER_LIB SKIP_LIB NETNS_LIB   (Bazel passes the rootpaths)
set -u
DIST="$1"
MWMS="$2"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
STEPS="${STEPS:-200}"
# shellcheck source=tests/cluster_lib.sh
source "$3"
# shellcheck source=tests/skip_lib.sh
source "$4"
# shellcheck source=tests/netns_lib.sh
source "$5"

skip_without_fashion_mnist
command -v nft >/dev/null || skip_test "no nft command (Debian's nftables)"
command -v tc >/dev/null || skip_test "no tc command (iproute2)"
trap 'kill_servers; netns_delete' EXIT
holds() { awk "BEGIN { exit !(($1) $2 ($3)) }" </dev/null; }

netns_hosts ps w0 w1
PS_HOSTS="${ADDR[ps]}:2222"
WORKER_HOSTS="${ADDR[w0]}:2222,${ADDR[w1]}:2222"

# in_host HOST NAME CMD...: CMD inside HOST's namespace (ip netns exec execs
# it: the PID is CMD's own), in the background, output in $TMP/NAME.out; its
# PID joins PIDS.
in_host() {
  local host=$1 name=$2
  shift 2
  ip netns exec "${NS[$host]}" "$@" >"$TMP/$name.out" 2>&1 &
  PIDS+=($!)
}

# wait_all WHAT: waits up to 300 s for every task in PIDS; a failure naming
# each task that did not exit 0 (124: still running; the EXIT trap kills it).
wait_all() {
  local i ok=0
  for i in "${!PIDS[@]}"; do
    wait_exit "${PIDS[i]}" 300
    if ((RC != 0)); then
      fail "$1: task $i exited $RC"
      ok=1
    fi
  done
  return $ok
}

# ps_training NAME FLAGS...: 1 ps + 2 workers; ACCURACY is the chief's.
ps_training() {
  local name=$1 job host i
  shift
  PIDS=()
  in_host ps "$name-ps" "$DIST" --ps_hosts="$PS_HOSTS" --worker_hosts="$WORKER_HOSTS" \
    --job_name=ps --task_index=0 --steps="$STEPS" "$@"
  for i in 0 1; do
    in_host "w$i" "$name-w$i" "$DIST" --ps_hosts="$PS_HOSTS" --worker_hosts="$WORKER_HOSTS" \
      --job_name=worker --task_index="$i" --steps="$STEPS" --log_every=100 "$@"
  done
  wait_all "$name" || { tail -n 5 "$TMP/$name"-*.out >&2; return 1; }
  ACCURACY=$(sed -nE 's/^test_accuracy=([0-9.]+)$/\1/p' "$TMP/$name-w0.out")
  if [[ -n "$ACCURACY" ]] && holds "$ACCURACY" '>' 0.6; then
    echo "ok: $name: 1 ps + 2 workers across namespaces, test_accuracy=$ACCURACY"
  else
    fail "$name: chief's test_accuracy '$ACCURACY': [$(tail -n 5 "$TMP/$name-w0.out")]"
  fi
}

# mwms NAME: two MultiWorkerMirrored workers on w0 and w1; RESULT is worker
# 0's loss and accuracy, which worker 1's must equal.
mwms() {
  local name=$1 i config
  PIDS=()
  for i in 0 1; do
    config="{\"cluster\": {\"worker\": [\"${ADDR[w0]}:2222\", \"${ADDR[w1]}:2222\"]}, \"task\": {\"type\": \"worker\", \"index\": $i}}"
    TF_CONFIG="$config" in_host "w$i" "$name-w$i" "$MWMS" --epochs=1 --batch_size=500
  done
  wait_all "$name" || { tail -n 5 "$TMP/$name"-*.out >&2; return 1; }
  local r0 r1
  r0="$(sed -nE 's/^epoch 1\/1: 60 steps in .*, (loss [0-9.]+), .*/\1/p; s/^worker 0: (test_accuracy=.*)/\1/p' "$TMP/$name-w0.out" | xargs)"
  r1="$(sed -nE 's/^epoch 1\/1: 60 steps in .*, (loss [0-9.]+), .*/\1/p; s/^worker 1: (test_accuracy=.*)/\1/p' "$TMP/$name-w1.out" | xargs)"
  RESULT="$r0"
  if [[ "$r0" == "loss "*" test_accuracy="* && "$r0" == "$r1" ]]; then
    echo "ok: $name: both MultiWorkerMirrored workers: $r0"
  else
    fail "$name: worker 0 [$r0], worker 1 [$r1]"
  fi
}

# 1. Clean links.
ps_training async
ps_training sync --is_sync
mwms mwms-clean
CLEAN="$RESULT"

# 2. 1 Gbit/s links that lose 1% of what each host sends.
for h in ps w0 w1; do
  ip netns exec "${NS[$h]}" tc qdisc add dev eth0 root tbf rate 1gbit burst 256kb latency 20ms &&
    ip netns exec "$BR" tc qdisc add dev "$h" root tbf rate 1gbit burst 256kb latency 20ms &&
    ip netns exec "${NS[$h]}" nft -f - <<NFT || fail "shaping $h's link"
table inet tg_loss {
  chain out {
    type filter hook output priority 0; policy accept;
    oifname "eth0" numgen random mod 100 < 1 counter drop
  }
}
NFT
done
((failures == 0)) || exit 1
mwms mwms-lossy
[[ "$RESULT" == "$CLEAN" ]] ||
  fail "MultiWorkerMirrored over lossy links gave [$RESULT], over clean links [$CLEAN]"
ps_training async-lossy
for h in ps w0 w1; do
  drops=$(ip netns exec "${NS[$h]}" nft list table inet tg_loss | sed -nE 's/.*counter packets ([0-9]+) .*/\1/p')
  shaped=$(ip netns exec "${NS[$h]}" tc -s qdisc show dev eth0 | sed -nE 's/^ *Sent ([0-9]+) bytes.*/\1/p' | head -1)
  if [[ -n "$drops" && "$drops" -gt 0 && -n "$shaped" && "$shaped" -gt 0 ]]; then
    echo "ok: $h's link: tbf 1gbit sent $shaped bytes, nftables dropped $drops packets"
  else
    fail "$h's link: drops '$drops', tbf sent '$shaped'"
  fi
done

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
