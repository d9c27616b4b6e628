#!/bin/bash
# A TFJob without Kubernetes (issue 22, item 8): examples/k8s/tfjob.yaml
#  1. is checked against the TFJob v1 schema in tests/testdata (with
#     python3-jsonschema), and broken copies of it are not: a replica count
#     that is not a number, an unknown restartPolicy, a replica without its
#     pod template, a misspelt tfReplicaSpecs, a port above 65535;
#  2. is run the way Kubeflow's training operator runs it
#     (tests/tfjob_operator.py emulate): one pod per replica, here a network
#     namespace of its own (tests/netns_lib.sh), its container's command and
#     environment from the manifest, the secret volume a temporary directory,
#     and exactly the TF_CONFIG the operator gives it, whose addresses are
#     the operator's service names (fashion-mnist-worker-1.default.svc:2222).
#     Those names resolve only through the test's hosts file, bind-mounted
#     over /etc/hosts for the replicas alone (netns_lib.sh's netns_on).
#     Training (200 steps) ends with every replica exiting 0 and worker 0,
#     the chief, printing its test accuracy.
#
# Needs root, python3-jsonschema and python3-yaml (skips otherwise). Every
# wait is bounded; an EXIT trap kills every replica and deletes the
# namespaces.
#
# Usage: tfjob_emulation_test.sh DISTRIBUTED_EXAMPLE MANIFEST SCHEMA OPERATOR_PY
#          CLUSTER_LIB SKIP_LIB NETNS_LIB   (Bazel passes the rootpaths)
set -u
DIST="$1"
MANIFEST="$2"
SCHEMA="$3"
OPERATOR="$4"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/cluster_lib.sh
source "$5"
# shellcheck source=tests/skip_lib.sh
source "$6"
# shellcheck source=tests/netns_lib.sh
source "$7"
PY=/usr/bin/python3

skip_without_fashion_mnist
"$PY" -c 'import jsonschema, yaml' 2>/dev/null ||
  skip_test "no python3-jsonschema or python3-yaml for $PY"
trap 'kill_servers; netns_delete' EXIT

# 1. The schema.
if out=$("$PY" "$OPERATOR" validate "$MANIFEST" "$SCHEMA" 2>&1); then
  echo "ok 1: $MANIFEST matches the TFJob v1 schema"
else
  fail "the manifest against the schema: [$out]"
fi
# broken NAME PYTHON-EXPRESSION-ON-job EXPECTED: a copy with one thing broken fails, naming it.
broken() {
  "$PY" - "$MANIFEST" "$TMP/$1.yaml" "$2" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
job = next(d for d in docs if d.get("kind") == "TFJob")
exec(sys.argv[3])
yaml.safe_dump(job, open(sys.argv[2], "w"))
PY
  if out=$("$PY" "$OPERATOR" validate "$TMP/$1.yaml" "$SCHEMA" 2>&1); then
    fail "$1: the broken manifest passed the schema"
  elif [[ "$out" == *"$3"* ]]; then
    echo "ok 1: $1 is rejected: ${out#*: }"
  else
    fail "$1: [$out], expected [$3]"
  fi
}
broken replicas 'job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "two"' \
  "tfReplicaSpecs/Worker/replicas: 'two' is not of type 'integer'"
broken restart 'job["spec"]["tfReplicaSpecs"]["PS"]["restartPolicy"] = "Sometimes"' \
  "tfReplicaSpecs/PS/restartPolicy: 'Sometimes' is not one of"
broken template 'del job["spec"]["tfReplicaSpecs"]["PS"]["template"]' \
  "tfReplicaSpecs/PS: 'template' is a required property"
broken misspelt 'job["spec"]["tfReplicaSpec"] = job["spec"].pop("tfReplicaSpecs")' \
  "'tfReplicaSpecs' is a required property"
broken port 'job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = 70000' \
  "containerPort: 70000 is greater than the maximum of 65535"

# 2. The operator's pods, one namespace each.
mkdir -p "$TMP/volumes/token"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/volumes/token/token"
"$PY" "$OPERATOR" emulate "$MANIFEST" "$TMP/pods" --bin_dir "$(dirname "$DIST")" \
  --volume_root "$TMP/volumes" --flag=--steps=200 --flag=--log_every=100 \
  --flag=--data_dir=/usr/share/datasets/fashion-mnist || { fail "emulate"; exit 1; }
mapfile -t REPLICAS < <(awk '{print $1}' "$TMP/pods/replicas.txt")
declare -A SERVICE
while read -r r host; do SERVICE[$r]=$host; done <"$TMP/pods/replicas.txt"
netns_hosts "${REPLICAS[@]}"
{
  echo "127.0.0.1 localhost"
  for r in "${REPLICAS[@]}"; do echo "${ADDR[$r]} ${SERVICE[$r]}"; done
} >"$TMP/hosts"
netns_on worker-0 "$TMP/hosts"
resolved=$("${ON[@]}" getent hosts "${SERVICE[ps-0]}" | awk '{print $1}')
[[ "$resolved" == "${ADDR[ps-0]}" ]] ||
  fail "${SERVICE[ps-0]} resolves to [$resolved] in worker-0's namespace, not ${ADDR[ps-0]}"
getent hosts "${SERVICE[ps-0]}" >/dev/null && fail "${SERVICE[ps-0]} resolves outside the test's namespaces"

PIDS=()
declare -A PID
for r in "${REPLICAS[@]}"; do
  mapfile -d '' -t argv <"$TMP/pods/$r.argv"
  mapfile -d '' -t envs <"$TMP/pods/$r.env"
  netns_on "$r" "$TMP/hosts"
  "${ON[@]}" env "${envs[@]}" "${argv[@]}" >"$TMP/$r.out" 2>&1 &
  PID[$r]=$!
  PIDS+=($!)
done
for r in "${REPLICAS[@]}"; do
  wait_exit "${PID[$r]}" 300
  ((RC == 0)) || fail "replica $r exited $RC: [$(tail -n 5 "$TMP/$r.out")]"
done
accuracy=$(sed -nE 's/^test_accuracy=([0-9.]+)$/\1/p' "$TMP/worker-0.out")
if [[ -n "$accuracy" ]] && awk "BEGIN { exit !($accuracy > 0.6) }"; then
  echo "ok 2: ${#REPLICAS[@]} replicas with the operator's TF_CONFIG ($(tr '\0' '\n' <"$TMP/pods/worker-1.env" | grep '^TF_CONFIG=')) trained; test_accuracy=$accuracy"
else
  fail "the chief's accuracy [$accuracy]: [$(tail -n 5 "$TMP/worker-0.out")]"
fi

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
