#!/bin/bash
# tg_server tasks that find their cluster by themselves, as srun and mpirun
# start them: the variables those launchers set are faked here, every host
# is this machine's loopback (a "node" named localhost), and each cluster
# runs the seed example (tests/testdata/seed_placement.pbtxt) with tg_run:
#
#   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
#   x, y (variables) ══x,y══► z1b = x·y + x ══z1b══► z2b = z1b·x + x
#
#   Slurm: SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE=3,
#          SLURM_PROCID/SLURM_LOCALID 0..2, --slurm_jobs=ps:1,worker:2:
#          ranks at localhost:BASE, BASE+1, BASE+2
#   MPI:   OMPI_COMM_WORLD_RANK 0..2 of 3, --cluster=the three addresses,
#          --mpi_jobs=ps:1,worker:2
#
# Also the failures: a cyclic Slurm layout (the self-entry check), a
# resolver with its variables missing, an unknown resolver, an evaluator's
# or another RPC layer's TF_CONFIG, and a TF_CONFIG
# as Kubeflow writes it (master, "environment": "cloud") whose own host does
# not resolve within --startup_timeout_seconds. Every wait is bounded; an
# EXIT trap kills whatever is left.
#
# Usage: cluster_resolver_test.sh TG_SERVER TG_RUN CLUSTER_LIB
set -u

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_SERVER="${1:-$RUNFILES/tools/tg_server}"
TG_RUN="${2:-$RUNFILES/tools/tg_run}"
GRAPH="$RUNFILES/tests/testdata/seed_placement.pbtxt"
[[ -f "$GRAPH" ]] || GRAPH="tests/testdata/seed_placement.pbtxt"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# No launcher's variables from the caller's environment.
unset TF_CONFIG SLURM_PROCID OMPI_COMM_WORLD_RANK PMIX_RANK

# shellcheck source=tests/cluster_lib.sh
source "$3"

# run_seed NAME TARGET: the seed example through TARGET must print 7s.
run_seed() {
  local out rc
  out="$(timeout 60 "$TG_RUN" --target="$2" --graph="$GRAPH" \
    --run=x/Assign,y/Assign --fetch=z2b 2>"$TMP/$1.tg_run.err")"
  rc=$?
  [[ $rc -eq 0 ]] || fail "$1 tg_run: exit status $rc, stderr: $(cat "$TMP/$1.tg_run.err")"
  [[ "$out" == "z2b float [2,2] [[7,7],[7,7]]" ]] || fail "$1 tg_run: stdout [$out]"
}

# expect_error NAME STATUS TEXT COMMAND...: COMMAND exits STATUS and says TEXT.
expect_error() {
  local name="$1" want="$2" text="$3" rc
  shift 3
  timeout 60 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
  rc=$?
  [[ $rc -eq $want ]] || fail "$name: exit status $rc, want $want; stderr [$(cat "$TMP/$name.err")]"
  grep -qF -- "$text" "$TMP/$name.err" || fail "$name: stderr [$(cat "$TMP/$name.err")] lacks [$text]"
}

# ---- Slurm: one node, three tasks ------------------------------------------
BASE="$(free_port_range 3)" || exit 1
names=(ps worker0 worker1)
for rank in 0 1 2; do
  # (Assignments before a shell function reach the commands it runs.)
  SLURMD_NODENAME=localhost SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE=3 \
    SLURM_STEP_NUM_TASKS=3 SLURM_PROCID=$rank SLURM_LOCALID=$rank start_server "slurm_${names[$rank]}" --slurm_jobs=ps:1,worker:2 --port_base="$BASE"
  SLURM_PIDS[$rank]=$LAST_PID
done
for rank in 0 1 2; do wait_ready "slurm_${names[$rank]}" "${SLURM_PIDS[$rank]}" || exit 1; done
want="tg_server ready /job:worker/replica:0/task:1 127.0.0.1:$((BASE + 2))"
[[ "$(cat "$TMP/slurm_worker1.out")" == "$want" ]] ||
  fail "slurm worker 1 ready line: [$(cat "$TMP/slurm_worker1.out")], want [$want]"
want="cluster resolver slurm (SLURM_PROCID=0 SLURM_LOCALID=0 SLURMD_NODENAME=localhost"
want+=" SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE=3): this task is"
want+=" /job:ps/replica:0/task:0 at localhost:$BASE; cluster ps=localhost:$BASE;"
want+="worker=localhost:$((BASE + 1)),localhost:$((BASE + 2))"
grep -qF "$want" "$TMP/slurm_ps.err" || fail "slurm ps stderr [$(cat "$TMP/slurm_ps.err")] lacks [$want]"
run_seed slurm "grpc://127.0.0.1:$((BASE + 1))"
stop_servers
PIDS=()

# ---- MPI: three ranks, addresses from --cluster ----------------------------
read -r P0 P1 P2 < <(free_ports 3)
HOSTS="127.0.0.1:$P0,127.0.0.1:$P1,127.0.0.1:$P2"
for rank in 0 1 2; do
  OMPI_COMM_WORLD_RANK=$rank OMPI_COMM_WORLD_SIZE=3 \
    start_server "mpi_${names[$rank]}" --cluster="$HOSTS" --mpi_jobs=ps:1,worker:2
  MPI_PIDS[$rank]=$LAST_PID
done
for rank in 0 1 2; do wait_ready "mpi_${names[$rank]}" "${MPI_PIDS[$rank]}" || exit 1; done
grep -qF "cluster resolver mpi (OMPI_COMM_WORLD_RANK=2 --cluster='$HOSTS'): this task is /job:worker/replica:0/task:1" \
  "$TMP/mpi_worker1.err" || fail "mpi worker 1 stderr [$(cat "$TMP/mpi_worker1.err")]"
run_seed mpi "grpc://127.0.0.1:$P1"
stop_servers
PIDS=()

# ---- failures ------------------------------------------------------------------
# srun --distribution=cyclic: rank 1 on the first node, where block puts rank 0.
expect_error cyclic 1 "FAILED_PRECONDITION: cluster resolver slurm: SLURM_PROCID=1 runs on SLURMD_NODENAME=localhost as SLURM_LOCALID=0" \
  env SLURM_PROCID=1 SLURM_LOCALID=0 SLURMD_NODENAME=localhost SLURM_STEP_NODELIST=localhost,n2 \
  SLURM_STEP_TASKS_PER_NODE="1(x2)" "$TG_SERVER" --port_base="$BASE"
expect_error no_slurm 1 "INVALID_ARGUMENT: cluster resolver slurm: SLURM_PROCID is not set" \
  "$TG_SERVER" --cluster_resolver=slurm
expect_error bad_hostlist 1 "SLURM_STEP_NODELIST: hostlist 'n[1-2': '[' without ']'" \
  env SLURM_PROCID=0 SLURM_LOCALID=0 SLURMD_NODENAME=n1 SLURM_STEP_NODELIST="n[1-2" \
  SLURM_STEP_TASKS_PER_NODE="1(x2)" "$TG_SERVER"
expect_error unknown 2 "--cluster_resolver='k8s' is not auto, flags, tf_config, slurm or mpi" \
  "$TG_SERVER" --cluster_resolver=k8s
expect_error nothing 2 "no cluster: give --cluster" "$TG_SERVER"
# An evaluator outside the cluster has no server to run (TensorFlow's rule).
expect_error evaluator 1 "INVALID_ARGUMENT: the task is the evaluator, which runs beside the training cluster" \
  env TF_CONFIG='{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "evaluator"}}' "$TG_SERVER"
# TensorFlow's other RPC layers are not served.
expect_error rpc_layer 1 "\"rpc_layer\" is 'grpc+verbs'; tensorgrid speaks only \"grpc\"" \
  env TF_CONFIG='{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker"},
                  "rpc_layer": "grpc+verbs"}' "$TG_SERVER"
# A TFJob replica whose own service name does not resolve (yet): named after
# the start-up timeout. (.invalid never resolves; nothing is bound.)
TFJOB='{"cluster": {"master": ["mnist-master-0.kubeflow.invalid:2222"],
                    "worker": ["mnist-worker-0.kubeflow.invalid:2222"]},
        "task": {"type": "master", "index": 0}, "environment": "cloud"}'
expect_error unresolved 1 "its host 'mnist-master-0.kubeflow.invalid' does not resolve" \
  env TF_CONFIG="$TFJOB" "$TG_SERVER" --startup_timeout_seconds=1
grep -qF "cluster resolver tf_config: this task is /job:master/replica:0/task:0" "$TMP/unresolved.err" ||
  fail "tfjob stderr [$(cat "$TMP/unresolved.err")]"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
