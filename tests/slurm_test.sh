#!/bin/bash
# A real Slurm, started by this test, launches the tg_server tasks that
# tests/cluster_resolver_test.sh only fakes: Debian's munged, slurmctld and
# slurmd, all in a temporary directory, all on loopback, all root:
#
#   munged --socket=$TMP/munge.socket (its own key, mode 0400)
#      ▲ auth/munge
#   slurmctld -D -f $TMP/slurm.conf (127.0.0.1:CTLD)  ◄──  srun, sinfo, scancel
#      │
#   slurmd -D -N localhost (127.0.0.1:SLURMD)   one node, CPUs=2 (this machine's)
#      │ srun -O -N 1 -n 3 --distribution=block
#      ├─ rank 0: tg_server /job:ps/task:0      localhost:BASE
#      ├─ rank 1: tg_server /job:worker/task:0  localhost:BASE+1  ◄── tg_run (seed: 7s)
#      └─ rank 2: tg_server /job:worker/task:1  localhost:BASE+2
#   then scancel --signal=TERM JOB.0: each task stops on the signal.
#
#   sbatch --wait -O -n 3 train.sbatch ── srun ── examples/distributed_fashion_mnist
#      ps:0, worker:0 (chief), worker:1, 100 async steps; the ps ends once both
#      workers are done, so every task exits 0 and so does sbatch --wait
#      (skipped, with a line, without Debian's dataset-fashion-mnist).
#
# One node, named localhost: the Slurm resolver gives each task the address
# NODENAME:PORT_BASE+SLURM_LOCALID. tests/slurm_netns_test.sh runs three
# nodes, each a network namespace with an address of its own.
#
# The daemons come from tests/slurm_lib.sh. Every process is started by PID
# and killed by the EXIT trap; every wait is bounded. Skips
# (tests/skip_lib.sh) unless root with Slurm and munge installed
# (scripts/setup.sh installs slurm-wlm and munge). KEEP_TMP=1 keeps the
# directory (logs, slurm.conf) for a look afterwards.
#
# Usage: slurm_test.sh TG_SERVER TG_RUN CLUSTER_LIB SKIP_LIB SLURM_LIB [FASHION_MNIST]
set -u
FASHION_MNIST="${6:+$(realpath "$6")}"

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_SERVER="$(realpath "${1:-$RUNFILES/tools/tg_server}")"
TG_RUN="${2:-$RUNFILES/tools/tg_run}"
GRAPH="$RUNFILES/tests/testdata/seed_placement.pbtxt"
[[ -f "$GRAPH" ]] || GRAPH="tests/testdata/seed_placement.pbtxt"
# shellcheck source=tests/skip_lib.sh
source "$4"
# shellcheck source=tests/cluster_lib.sh
source "$3"
# shellcheck source=tests/slurm_lib.sh
source "$5"

START=$SECONDS
slurm_start_munge
slurm_write_conf 127.0.0.1 "localhost 127.0.0.1"
slurm_start_ctld
slurm_start_slurmd localhost
slurm_wait_idle 1
echo "slurm up in $((SECONDS - START)) s"

# ---- srun: 1 ps + 2 workers ------------------------------------------------------
BASE="$(free_port_range 3)" || exit 1
slurm_srun_servers 1 "$BASE" "$TG_SERVER"
want="tg_server ready /job:worker/replica:0/task:1 127.0.0.1:$((BASE + 2))"
[[ "$(cat "$TMP/task2.out")" == "$want" ]] || fail "rank 2 ready line [$(cat "$TMP/task2.out")], want [$want]"
want="cluster resolver slurm (SLURM_PROCID=0 SLURM_LOCALID=0 SLURMD_NODENAME=localhost"
want+=" SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE=3): this task is"
want+=" /job:ps/replica:0/task:0 at localhost:$BASE"
grep -qF "$want" "$TMP/task0.err" || fail "rank 0 stderr [$(cat "$TMP/task0.err")] lacks [$want]"

out="$(timeout 60 "$TG_RUN" --target="grpc://127.0.0.1:$((BASE + 1))" --graph="$GRAPH" \
  --run=x/Assign,y/Assign --fetch=z2b 2>"$TMP/tg_run.err")"
rc=$?
[[ $rc -eq 0 ]] || fail "tg_run: exit status $rc, stderr: $(cat "$TMP/tg_run.err")"
[[ "$out" == "z2b float [2,2] [[7,7],[7,7]]" ]] || fail "tg_run: stdout [$out]"

# ---- stop the step: scancel sends SIGTERM, the servers stop gracefully ----------
slurm_stop_servers
# None exited non-zero (srun names those).
grep -q "exit code" "$TMP/srun.out" && fail "srun: [$(cat "$TMP/srun.out")]"

# ---- sbatch: distributed Fashion-MNIST, 1 ps + 2 workers, ending by itself ----
if [[ -z "$FASHION_MNIST" ]]; then
  echo "no Fashion-MNIST example given: sbatch part not run"
elif [[ ! -d /usr/share/datasets/fashion-mnist ]]; then
  echo "no Fashion-MNIST data (Debian's dataset-fashion-mnist): sbatch part not run"
else
  BASE="$(free_port_range 3)" || exit 1
  START=$SECONDS
  slurm_sbatch_train 1 "$BASE" "$FASHION_MNIST"
  echo "sbatch job took $((SECONDS - START)) s"
  grep -q "^test_accuracy=0\.[0-9]*$" "$TMP/train1.out" ||
    fail "chief printed no test_accuracy: [$(tail -n 5 "$TMP/train1.out")] [$(tail -n 5 "$TMP/train1.err")]"
fi

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
