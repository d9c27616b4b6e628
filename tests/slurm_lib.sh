# shellcheck shell=bash
# A real Slurm for shell tests, started and stopped by the test: Debian's
# munged, slurmctld and slurmd, everything in a temporary directory, all
# root. Source it after cluster_lib.sh and skip_lib.sh; it sets TMP (under
# /tmp: munged's and slurmd's Unix socket paths must fit in 108 bytes) and
# installs an EXIT trap that cancels the jobs, stops the daemons and removes
# TMP (KEEP_TMP=1 keeps it). SLURM_WRAP, if set, is a command (array) every
# daemon and client command runs under (`ip netns exec NS` for hosts made of
# network namespaces):
#
#   slurm_start_munge
#   slurm_write_conf CTLD_ADDRESS "n1 10.0.0.2" "n2 10.0.0.3"   # NodeName NodeAddr
#   slurm_start_ctld
#   slurm_start_slurmd n1                                       # one per node
#   slurm_wait_idle 2
#   slurm_srun_servers 2 2222 TG_SERVER ... slurm_stop_servers   # 1 ps + 2 workers
#   slurm_sbatch_train 2 2222 DISTRIBUTED_FASHION_MNIST          # a batch job
#   slurm_run squeue ...                                         # anything else
#
# die MESSAGE fails the test at once, with the tail of every daemon's log.

[[ "$(id -u)" -eq 0 ]] || skip_test "Slurm tests need root (munged, slurmd)"
for tool in munged slurmctld slurmd srun sinfo scancel squeue sbatch; do
  command -v "$tool" >/dev/null || PATH="$PATH:/usr/sbin"
  command -v "$tool" >/dev/null || skip_test "no $tool: install slurm-wlm and munge (scripts/setup.sh)"
done
TMP="$(mktemp -d /tmp/tg_slurm.XXXXXX)"
unset TF_CONFIG SLURM_PROCID SLURM_JOB_ID OMPI_COMM_WORLD_RANK PMIX_RANK
SLURM_WRAP=()
SLURM_DAEMONS=()
SRUN_PID=

# slurm_run COMMAND...: COMMAND under SLURM_WRAP.
slurm_run() { "${SLURM_WRAP[@]}" "$@"; }

slurm_stop_all() {
  local pid i
  kill_servers
  [[ -n "$SRUN_PID" ]] && kill -KILL "$SRUN_PID" 2>/dev/null
  # Jobs first, while slurmd and munged can still end their steps.
  timeout 10 "${SLURM_WRAP[@]}" scancel --full --signal=KILL --user=root 2>/dev/null
  for ((i = 0; i < 50; i++)); do
    [[ -z "$(timeout 5 "${SLURM_WRAP[@]}" squeue -h 2>/dev/null)" ]] && break
    sleep 0.1
  done
  for pid in "${SLURM_DAEMONS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${SLURM_DAEMONS[@]}"; do
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"
}
trap slurm_stop_all EXIT

die() {
  fail "$*"
  local f
  for f in "$TMP"/*.log "$TMP"/*.out; do echo "---- $f" >&2; tail -n 20 "$f" >&2; done
  exit 1
}

# wait_for SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds.
wait_for() {
  local i limit=$(($1 * 10))
  shift
  for ((i = 0; i < limit; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

# munged with its own key and socket.
slurm_start_munge() {
  dd if=/dev/urandom of="$TMP/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$TMP/munge.key"
  chmod 0700 "$TMP"
  munged --foreground --force --socket="$TMP/munge.socket" --key-file="$TMP/munge.key" \
    --pid-file="$TMP/munged.pid" --log-file="$TMP/munged.log" --seed-file="$TMP/munge.seed" \
    >"$TMP/munged.out" 2>&1 &
  SLURM_DAEMONS+=($!)
  wait_for 10 test -S "$TMP/munge.socket" || die "munged did not make its socket"
}

# slurm_write_conf CTLD_ADDRESS "NODE ADDRESS"...: $TMP/slurm.conf (exported
# as SLURM_CONF) with slurmctld on this machine's hostname at CTLD_ADDRESS,
# one node line per argument (2 CPUs each, this machine's), one partition.
slurm_write_conf() {
  local ctld=$1 node name address
  shift
  read -r CTLD_PORT SLURMD_PORT < <(free_ports 2)
  mkdir -p "$TMP/state"
  {
    cat <<EOF
ClusterName=tgtest
SlurmctldHost=$(hostname)($ctld)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$TMP/munge.socket
CredType=cred/munge
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool/%n
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.%n.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=5
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
EOF
    SLURM_NODES=()
    for node in "$@"; do
      read -r name address <<<"$node"
      SLURM_NODES+=("$name")
      mkdir -p "$TMP/spool/$name"
      echo "NodeName=$name NodeHostname=$(hostname) NodeAddr=$address Port=$SLURMD_PORT CPUs=2 State=UNKNOWN"
    done
    echo "PartitionName=tg Nodes=$(IFS=,; echo "${SLURM_NODES[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } >"$TMP/slurm.conf"
  export SLURM_CONF="$TMP/slurm.conf"
}

slurm_start_ctld() {
  slurm_run slurmctld -D -i -f "$SLURM_CONF" >"$TMP/slurmctld.out" 2>&1 &
  SLURM_DAEMONS+=($!)
}

# slurm_start_slurmd NODE [WRAP...]: NODE's slurmd, under WRAP (default SLURM_WRAP).
slurm_start_slurmd() {
  local node=$1
  shift
  local wrap=("$@")
  ((${#wrap[@]} > 0)) || wrap=("${SLURM_WRAP[@]}")
  "${wrap[@]}" slurmd -D -N "$node" -f "$SLURM_CONF" >"$TMP/slurmd.$node.out" 2>&1 &
  SLURM_DAEMONS+=($!)
}

# slurm_wait_idle N: waits up to 30 s until sinfo shows N idle nodes.
slurm_idle() { [[ "$(timeout 5 "${SLURM_WRAP[@]}" sinfo -h -N -t idle -o '%N' 2>/dev/null | wc -l)" -eq $1 ]]; }
slurm_wait_idle() {
  wait_for 30 slurm_idle "$1" ||
    die "nodes not idle: sinfo [$(timeout 5 "${SLURM_WRAP[@]}" sinfo -N 2>&1)]"
}

# slurm_srun_servers NODES PORT_BASE TG_SERVER: srun -N NODES -n 3 of
# TG_SERVER as 1 ps + 2 workers (the Slurm resolver, ports from PORT_BASE),
# in the background (SRUN_PID); rank r's output in $TMP/task<r>.{out,err}.
# Dies unless every rank is ready within 30 s.
slurm_srun_servers() {
  slurm_run srun -O -N "$1" -n 3 --distribution=block --job-name=tg_servers \
    --output="$TMP/task%t.out" --error="$TMP/task%t.err" "$3" --cluster_resolver=slurm \
    --slurm_jobs=ps:1,worker:2 --port_base="$2" >"$TMP/srun.out" 2>&1 &
  SRUN_PID=$!
  local names=(ps worker0 worker1) rank
  task_ready() { grep -q "^tg_server ready " "$TMP/task$1.out" 2>/dev/null; }
  for rank in 0 1 2; do
    wait_for 30 task_ready "$rank" ||
      die "rank $rank (${names[$rank]}) not ready: srun [$(cat "$TMP/srun.out")] stderr [$(cat "$TMP/task$rank.err" 2>/dev/null)]"
  done
}

# slurm_stop_servers: scancel --signal=TERM on slurm_srun_servers' step;
# fails unless srun ends, every rank stopped on the signal and no job is left.
slurm_stop_servers() {
  local job rank
  job="$(timeout 5 "${SLURM_WRAP[@]}" squeue -h -n tg_servers -o %i)"
  [[ -n "$job" ]] || fail "squeue shows no tg_servers job"
  timeout 10 "${SLURM_WRAP[@]}" scancel -v --signal=TERM "$job.0" >"$TMP/scancel.out" 2>&1 ||
    fail "scancel $job.0 failed: $(cat "$TMP/scancel.out")"
  wait_exit "$SRUN_PID"
  [[ $RC -ne 124 ]] || fail "srun still running 30 s after scancel"
  SRUN_PID=
  for rank in 0 1 2; do
    grep -qF "tg_server: Terminated, stopping /job:" "$TMP/task$rank.err" ||
      fail "rank $rank did not stop on SIGTERM: [$(cat "$TMP/task$rank.err")]"
  done
  no_jobs() { [[ -z "$(timeout 5 "${SLURM_WRAP[@]}" squeue -h 2>/dev/null)" ]]; }
  wait_for 30 no_jobs || fail "jobs left: [$(timeout 5 "${SLURM_WRAP[@]}" squeue 2>&1)]"
}

# slurm_sbatch_train NODES PORT_BASE EXAMPLE: sbatch --wait -N NODES -n 3 of a
# batch script whose srun runs examples/distributed_fashion_mnist (EXAMPLE) as
# 1 ps + 2 workers for 100 async steps; the ps stops once both workers' done
# tokens are in its queue, so the job ends with every task exiting 0 and
# sbatch --wait with 0. Rank r's output in $TMP/train<r>.{out,err}.
slurm_sbatch_train() {
  cat >"$TMP/train.sbatch" <<SBATCH
#!/bin/bash
srun -O --distribution=block --output="$TMP/train%t.out" --error="$TMP/train%t.err" \\
  "$3" --cluster_resolver=slurm --slurm_jobs=ps:1,worker:2 --port_base=$2 \\
  --steps=100 --log_every=10
SBATCH
  local rc
  timeout 300 "${SLURM_WRAP[@]}" sbatch --wait -O -N "$1" -n 3 --job-name=tg_train \
    --output="$TMP/train.log" "$TMP/train.sbatch" >"$TMP/sbatch.out" 2>&1
  rc=$?
  [[ $rc -eq 0 ]] || fail "sbatch --wait: exit status $rc: [$(cat "$TMP/sbatch.out")] job [$(cat "$TMP/train.log")]"
  grep -q "exit code" "$TMP/train.log" && fail "batch job: [$(cat "$TMP/train.log")]"
  grep -q "^/job:ps/replica:0/task:0: all 2 workers are done, stopping$" "$TMP/train0.out" ||
    fail "ps did not end through the done queue: [$(cat "$TMP/train0.out")] [$(tail -n 5 "$TMP/train0.err")]"
}
