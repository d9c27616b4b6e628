#!/bin/bash
# A real Slurm on three simulated nodes (issue 22, item 6): Debian's munged,
# slurmctld and three slurmd, each slurmd in a network namespace of its own
# (tests/netns_lib.sh: a bridge namespace, no default route, nothing in the
# machine's own namespace), slurmctld and every client command in one more:
#
#   namespace ctl: slurmctld, srun, sbatch, squeue, scancel, tg_run
#   namespace n1: slurmd -N n1    namespace n2: slurmd -N n2    namespace n3: slurmd -N n3
#
# Every process runs in its host's network namespace and sees the test's
# hosts file as /etc/hosts (netns_lib.sh's netns_on: nsenter --net, unshare
# --mount, a bind mount), so the node names resolve there and nowhere else;
# slurmd's tasks inherit both. (`ip netns exec` would remount /sys, without
# the cgroups slurmd needs.) On it:
#
#   srun -N 3 -n 3 tg_server --cluster_resolver=slurm --slurm_jobs=ps:1,worker:2
#     --port_base=2222: one task per node, each told its cluster by Slurm's
#     variables (SLURM_STEP_NODELIST=n[1-3]) as n1:2222, n2:2222, n3:2222 and
#     bound to its own node's address; tg_run in ctl runs the seed example
#     against grpc://n2:2222 ([[7,7],[7,7]]); scancel --signal=TERM stops them;
#   sbatch -N 3 -n 3: examples/distributed_fashion_mnist, 1 ps + 2 workers
#     on the three nodes, 100 async steps, every task exiting 0 (skipped,
#     with a line, without Debian's dataset-fashion-mnist).
#
# Every process is started by PID and killed by the EXIT trap; every wait is
# bounded. Skips (tests/skip_lib.sh) unless root with Slurm, munge and
# network namespaces.
#
# Usage: slurm_netns_test.sh TG_SERVER TG_RUN CLUSTER_LIB SKIP_LIB NETNS_LIB SLURM_LIB
#          [FASHION_MNIST]
set -u
TG_SERVER="$(realpath "$1")"
TG_RUN="$(realpath "$2")"
FASHION_MNIST="${7:+$(realpath "$7")}"
RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
GRAPH="$RUNFILES/tests/testdata/seed_placement.pbtxt"
[[ -f "$GRAPH" ]] || GRAPH="tests/testdata/seed_placement.pbtxt"
GRAPH="$(realpath "$GRAPH")"
# shellcheck source=tests/skip_lib.sh
source "$4"
# shellcheck source=tests/cluster_lib.sh
source "$3"
# shellcheck source=tests/slurm_lib.sh
source "$6"
# shellcheck source=tests/netns_lib.sh
source "$5"
trap 'slurm_stop_all; netns_delete' EXIT

netns_hosts ctl n1 n2 n3
{
  echo "127.0.0.1 localhost"
  for h in ctl n1 n2 n3; do echo "${ADDR[$h]} $h"; done
} >"$TMP/hosts"
netns_on ctl "$TMP/hosts"
SLURM_WRAP=("${ON[@]}")

START=$SECONDS
slurm_start_munge
slurm_write_conf "${ADDR[ctl]}" "n1 ${ADDR[n1]}" "n2 ${ADDR[n2]}" "n3 ${ADDR[n3]}"
slurm_start_ctld
for n in n1 n2 n3; do
  netns_on "$n" "$TMP/hosts"
  slurm_start_slurmd "$n" "${ON[@]}"
done
slurm_wait_idle 3
echo "slurm up on 3 nodes in $((SECONDS - START)) s"

# ---- srun: 1 ps + 2 workers, one per node ------------------------------------------
slurm_srun_servers 3 2222 "$TG_SERVER"
want="cluster resolver slurm (SLURM_PROCID=2 SLURM_LOCALID=0 SLURMD_NODENAME=n3"
want+=" SLURM_STEP_NODELIST=n[1-3] SLURM_STEP_TASKS_PER_NODE=1(x3)): this task is"
want+=" /job:worker/replica:0/task:1 at n3:2222"
grep -qF "$want" "$TMP/task2.err" || fail "rank 2 stderr [$(cat "$TMP/task2.err")] lacks [$want]"
for rank in 0 1 2; do
  node="n$((rank + 1))"
  listening=$(nsenter --net="/run/netns/${NS[$node]}" ss -Htln | awk '{print $4}' |
    sed -e 's/^\[::ffff:\(.*\)\]:/\1:/' | grep ':2222$')
  [[ "$listening" == "${ADDR[$node]}:2222" ]] ||
    fail "rank $rank on $node listens on [$listening], not ${ADDR[$node]}:2222"
done
out="$(timeout 60 "${SLURM_WRAP[@]}" "$TG_RUN" --target=grpc://n2:2222 --graph="$GRAPH" \
  --run=x/Assign,y/Assign --fetch=z2b 2>"$TMP/tg_run.err")"
rc=$?
if [[ $rc -eq 0 && "$out" == "z2b float [2,2] [[7,7],[7,7]]" ]]; then
  echo "ok: srun placed ps, worker 0 and worker 1 on n1, n2, n3; the seed example gives $out"
else
  fail "tg_run: exit status $rc, stdout [$out], stderr: $(cat "$TMP/tg_run.err")"
fi

# ---- stop the step: scancel sends SIGTERM, the servers stop gracefully ----------
slurm_stop_servers

# ---- sbatch: distributed Fashion-MNIST on the three nodes -------------------------
if [[ -z "$FASHION_MNIST" ]]; then
  echo "no Fashion-MNIST example given: sbatch part not run"
elif [[ ! -d /usr/share/datasets/fashion-mnist ]]; then
  echo "no Fashion-MNIST data (Debian's dataset-fashion-mnist): sbatch part not run"
else
  START=$SECONDS
  slurm_sbatch_train 3 2222 "$FASHION_MNIST"
  accuracy=$(sed -nE 's/^test_accuracy=(0\.[0-9]*)$/\1/p' "$TMP/train1.out")
  if [[ -n "$accuracy" ]] && grep -q "this task is /job:worker/replica:0/task:0 at n2:2222" "$TMP/train1.err"; then
    echo "ok: sbatch trained 1 ps + 2 workers on n1, n2, n3 in $((SECONDS - START)) s: test_accuracy=$accuracy"
  else
    fail "chief (on n2): [$(tail -n 5 "$TMP/train1.out")] [$(tail -n 5 "$TMP/train1.err")]"
  fi
fi

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
