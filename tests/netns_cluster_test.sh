#!/bin/bash
# Simulated hosts: a cluster whose tasks each live in a network namespace of
# their own, with their own address, joined by a bridge in one more
# namespace (issue 22, items 7a and 7b). The namespaces are the test's own; nothing
# is added to the machine's own namespace and no namespace has a default
# route, so no packet can leave them:
#
#   namespace tgN-ps         namespace tgN-w0         namespace tgN-w1
#   /job:ps/task:0           /job:worker/task:0       /job:worker/task:1
#   tg_server                tg_server, tg_run        tg_server
#   eth0 10.231.Z.1/24       eth0 10.231.Z.2/24       eth0 10.231.Z.3/24
#     │ veth                   │ veth                   │ veth
#   ┌─┴──────────────────────┴────────────────────────┴──┐
#   │ ps            w0          br0 (bridge)          w1 │ namespace tgN-br
#   └────────────────────────────────────────────────────┘
#
# (N: this shell's PID, "r" and a random number; Z: random.) Every task binds its
# own cluster entry's address (the --bind default) on port 2222, and tg_run,
# inside tgN-w0, runs the seed example (tests/testdata/seed_placement.pbtxt)
# against grpc://10.231.Z.2:2222:
#
#   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
#   x, y (variables) ══x,y══► z1b = x·y + x ══z1b══► z2b = z1b·x + x
#
# once with the bulk port (the default: the test checks that the tasks hold
# connections to each other's bulk ports after the step) and once with
# TG_BULK_TRANSFER=0 (no bulk port at all), and once with
# TG_BULK_PORT_OFFSET=1000 (every bulk port at 3222). Then worker 1's link is cut
# (`ip link set eth0 down` in tgN-w1) while a step waits on worker 1: the
# client gets UNAVAILABLE naming worker 1; with the link back up the seed
# example runs again. Needs root; skips otherwise, or when `ip netns add`
# fails. Every wait is bounded; an EXIT trap kills the servers and the
# client and deletes the namespaces.
#
# Usage: netns_cluster_test.sh TG_SERVER TG_RUN CLUSTER_LIB SKIP_LIB NETNS_LIB
#   (Bazel passes the rootpaths.)
set -u

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_SERVER="${1:-$RUNFILES/tools/tg_server}"
TG_RUN="${2:-$RUNFILES/tools/tg_run}"
GRAPH="$RUNFILES/tests/testdata/seed_placement.pbtxt"
[[ -f "$GRAPH" ]] || GRAPH="tests/testdata/seed_placement.pbtxt"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"

# shellcheck source=tests/cluster_lib.sh
source "$3"
# shellcheck source=tests/skip_lib.sh
source "$4"
# shellcheck source=tests/netns_lib.sh
source "$5"

command -v ss >/dev/null || skip_test "no ss command (iproute2)"

CLIENT_PID=
cleanup() {
  [[ -n "$CLIENT_PID" ]] && kill -TERM "$CLIENT_PID" 2>/dev/null
  kill_servers
  netns_delete
}
trap cleanup EXIT

netns_hosts ps w0 w1
NS_PS="${NS[ps]}"
NS_W0="${NS[w0]}"
NS_W1="${NS[w1]}"

CLUSTER="ps=$NET.1:2222;worker=$NET.2:2222,$NET.3:2222"

# start_in NS NAME ARGS...: tg_server inside NS (ip netns exec execs it, so
# $LAST_PID is the server's own PID), output in $TMP/NAME.{out,err}.
start_in() {
  local ns="$1" name="$2"
  shift 2
  ip netns exec "$ns" "$TG_SERVER" --cluster="$CLUSTER" "$@" \
    >"$TMP/$name.out" 2>"$TMP/$name.err" &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

# start_cluster: the three tasks, each in its namespace, and their ready lines.
start_cluster() {
  PIDS=()
  start_in "$NS_PS" ps --job_name=ps --task_index=0
  start_in "$NS_W0" worker0 --job_name=worker --task_index=0
  start_in "$NS_W1" worker1 --job_name=worker --task_index=1
  wait_ready ps "${PIDS[0]}" && wait_ready worker0 "${PIDS[1]}" &&
    wait_ready worker1 "${PIDS[2]}" || exit 1
  local name task ip
  for name in "ps /job:ps/replica:0/task:0 1" "worker0 /job:worker/replica:0/task:0 2" \
    "worker1 /job:worker/replica:0/task:1 3"; do
    read -r name task ip <<<"$name"
    [[ "$(cat "$TMP/$name.out")" == "tg_server ready $task $NET.$ip:2222" ]] ||
      fail "$name ready line: [$(cat "$TMP/$name.out")]"
  done
}

# listeners NS: the addresses NS's server listens on, sorted, one a line
# (an IPv4 address that gRPC listens on through an IPv6 socket, shown as
# [::ffff:10.231.Z.1]:2222, as 10.231.Z.1:2222).
listeners() {
  ip netns exec "$1" ss -Htln | awk '{print $4}' | sed -e 's/^\[::ffff:\(.*\)\]:/\1:/' | sort
}

# run_seed WHAT: the seed example from inside worker 0's namespace.
run_seed() {
  local out rc
  out="$(timeout 90 ip netns exec "$NS_W0" "$TG_RUN" --target="grpc://$NET.2:2222" \
    --graph="$GRAPH" --run=x/Assign,y/Assign --fetch=z2b 2>"$TMP/tg_run.err")"
  rc=$?
  [[ $rc -eq 0 ]] || fail "$1: tg_run exit status $rc, stderr: $(cat "$TMP/tg_run.err")"
  [[ "$out" == "z2b float [2,2] [[7,7],[7,7]]" ]] || fail "$1: tg_run stdout [$out]"
}

# find_bulk_port NAME NS IP: BULK[NAME] is the port other than 2222 that
# NS's server listens on (its only other one) at $NET.IP; a failure (and
# "none") if it listens on anything else.
declare -A BULK
find_bulk_port() {
  local addrs a others=()
  mapfile -t addrs < <(listeners "$2")
  for a in "${addrs[@]}"; do [[ "$a" == "$NET.$3:2222" ]] || others+=("$a"); done
  BULK[$1]=none
  if [[ ${#addrs[@]} -eq 2 && ${#others[@]} -eq 1 && "${others[0]}" == "$NET.$3:"* ]]; then
    BULK[$1]="${others[0]##*:}"
  else
    fail "$1 listens on [${addrs[*]}], not $NET.$3:2222 and a bulk port on $NET.$3"
  fi
}

# peers NS PORT: the addresses of the established connections to PORT in NS.
peers() {
  ip netns exec "$1" ss -Htn state established "( sport = :$2 )" | awk '{print $4}'
}

# With the bulk port (the default). Each task binds its own address only, on
# 2222 and on its bulk port; after the step, ps and worker 1 hold worker 0's
# pooled connections to their bulk ports (worker 0's master sent them their
# partitions there), and nobody fell back to gRPC.
start_cluster
find_bulk_port ps "$NS_PS" 1
find_bulk_port worker0 "$NS_W0" 2
find_bulk_port worker1 "$NS_W1" 3
run_seed "with the bulk port"
for n in ps:"$NS_PS" worker1:"$NS_W1"; do
  IFS=: read -r name ns <<<"$n"
  connected="$(peers "$ns" "${BULK[$name]}")"
  grep -q "^$NET.2:" <<<"$connected" ||
    fail "$name: no connection from worker 0 to its bulk port ${BULK[$name]} (peers: [$connected])"
done
cat "$TMP"/ps.err "$TMP"/worker0.err "$TMP"/worker1.err "$TMP/tg_run.err" >"$TMP/all.err"
grep -q "bulk port" "$TMP/all.err" && fail "a bulk port fell back to gRPC: $(grep "bulk port" "$TMP/all.err")"
stop_servers

# Without the bulk port: only 2222 is open, and the step goes over gRPC.
export TG_BULK_TRANSFER=0
start_cluster
for n in ps:"$NS_PS":1 worker0:"$NS_W0":2 worker1:"$NS_W1":3; do
  IFS=: read -r name ns ip <<<"$n"
  listening="$(listeners "$ns")"
  [[ "$listening" == "$NET.$ip:2222" ]] || fail "$name with TG_BULK_TRANSFER=0 listens on [$listening]"
done
run_seed "TG_BULK_TRANSFER=0"
stop_servers
unset TG_BULK_TRANSFER

# A fixed bulk port, as a firewall wants it: 2222 + 1000 on every host.
export TG_BULK_PORT_OFFSET=1000
start_cluster
for n in ps:"$NS_PS":1 worker0:"$NS_W0":2 worker1:"$NS_W1":3; do
  IFS=: read -r name ns ip <<<"$n"
  listening="$(listeners "$ns" | xargs)"
  [[ "$listening" == "$NET.$ip:2222 $NET.$ip:3222" ]] ||
    fail "$name with TG_BULK_PORT_OFFSET=1000 listens on [$listening]"
done
run_seed "TG_BULK_PORT_OFFSET=1000"
grep -q "^$NET.2:" <<<"$(peers "$NS_W1" 3222)" ||
  fail "worker 0 holds no connection to worker 1's bulk port 3222"
stop_servers
unset TG_BULK_PORT_OFFSET

# Worker 1's link cut in the middle of a step: a step that waits on an empty
# queue on worker 1 is running (worker 0's master has connected to worker 1's
# bulk port to send it its partition) when eth0 goes down in worker 1's
# namespace. The client gets UNAVAILABLE naming worker 1 and its address (the
# bulk port's beats stop; about 40 s), not a hang. With the link back up, the
# seed example runs again on the same tasks.
cat >"$TMP/blocked.pbtxt" <<'GRAPH'
node {
  name: "q"
  op: "FIFOQueueV2"
  device: "/job:worker/task:1"
  attr { key: "component_types" value { list { type: DT_FLOAT } } }
}
node {
  name: "dequeue"
  op: "QueueDequeueV2"
  input: "q"
  device: "/job:worker/task:1"
  attr { key: "component_types" value { list { type: DT_FLOAT } } }
}
GRAPH
start_cluster
find_bulk_port worker1 "$NS_W1" 3
timeout 150 ip netns exec "$NS_W0" "$TG_RUN" --target="grpc://$NET.2:2222" \
  --graph="$TMP/blocked.pbtxt" --fetch=dequeue >"$TMP/blocked.out" 2>"$TMP/blocked.err" &
CLIENT_PID=$!
for ((i = 0; i < 300; i++)); do
  grep -q "^$NET.2:" <<<"$(peers "$NS_W1" "${BULK[worker1]}")" && break
  kill -0 "$CLIENT_PID" 2>/dev/null || break
  sleep 0.1
done
grep -q "^$NET.2:" <<<"$(peers "$NS_W1" "${BULK[worker1]}")" ||
  fail "the blocked step never reached worker 1: stderr [$(cat "$TMP/blocked.err")]"
ip -n "$NS_W1" link set eth0 down || fail "cutting worker 1's link"
wait "$CLIENT_PID"
RC=$?
CLIENT_PID=
[[ $RC -eq 1 ]] || fail "the step with worker 1's link cut: exit status $RC (124: no answer in 150 s)"
grep -q "UNAVAILABLE: .*/job:worker/replica:0/task:1 ($NET.3:2222)" "$TMP/blocked.err" ||
  fail "the step with worker 1's link cut: stderr [$(cat "$TMP/blocked.err")]"
[[ ! -s "$TMP/blocked.out" ]] || fail "the step with worker 1's link cut printed [$(cat "$TMP/blocked.out")]"
ip -n "$NS_W1" link set eth0 up || fail "bringing worker 1's link back"
run_seed "worker 1's link back"
stop_servers

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
