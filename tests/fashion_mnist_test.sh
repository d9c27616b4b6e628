#!/usr/bin/env bash
# examples/fashion_mnist on the real data: a short training run whose loss
# falls and whose last line is test_accuracy=0.xxxx; a run that saves
# checkpoints and one that resumes from them, matching the uninterrupted run;
# --logdir's event files (read by tests/tfevents.py); --export_dir's
# SavedModel, run by tools/tg_run; a missing data
# directory and bad flags. Without Debian's
# dataset-fashion-mnist package it reports a skip (tests/skip_lib.sh).
set -u
bin="$1"
tg_run="$2"
data=/usr/share/datasets/fashion-mnist
# shellcheck source=tests/skip_lib.sh
source "$(dirname "$0")/skip_lib.sh"
skip_without_fashion_mnist
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
fail() {
  echo "FAIL: $1"
  [[ -n "${2:-}" ]] && echo "$2"
  failures=$((failures + 1))
}
ok() { echo "ok: $1"; }
# loss_at OUTPUT STEP: the loss on the progress line of STEP.
loss_at() { sed -nE "s#^step $2/[0-9]+, loss ([0-9.]+), .*#\1#p" <<<"$1"; }
# Whether "($1) $2 ($3)" holds in awk's arithmetic: holds 0.5 '<' '2 * 0.3'.
holds() { awk "BEGIN { exit !(($1) $2 ($3)) }" </dev/null; }

# 1. 300 steps of batch 32: the loss falls, the last line is the accuracy.
out=$("$bin" --steps=300 --log_every=50 2>&1)
status=$?
first=$(loss_at "$out" 50)
last=$(loss_at "$out" 300)
if [[ $status -ne 0 || -z "$first" || -z "$last" ]]; then
  fail "300 steps ran and logged steps 50 and 300 (exit $status)" "$out"
elif holds "$last" '<' "$first * 0.6"; then
  ok "loss fell from $first (steps 1-50) to $last (steps 251-300)"
else
  fail "loss did not fall enough: $first (steps 1-50) -> $last (steps 251-300)" "$out"
fi
accuracy=$(tail -n 1 <<<"$out")
if [[ "$accuracy" =~ ^test_accuracy=(0\.[0-9]{4})$ ]] && holds "${BASH_REMATCH[1]}" '>' 0.6; then
  ok "last line is $accuracy"
else
  fail "last line is not test_accuracy=0.xxxx above 0.6: '$accuracy'" "$out"
fi
full_150=$(loss_at "$out" 150)

# 2. 100 steps saving checkpoints, then a run to 150 resumes from step 100
#    and sees what the uninterrupted run saw (same batches, Adam's state).
ckpt="$tmp/ckpt"
rm -rf "$ckpt"
out=$("$bin" --steps=100 --log_every=50 --save_every=50 --checkpoint_dir="$ckpt" 2>&1)
if [[ $? -eq 0 && "$out" == *"no checkpoint in $ckpt: starting from step 0"* &&
      "$out" == *"saved $ckpt/model-50"* && "$out" == *"saved $ckpt/model-100"* &&
      -f "$ckpt/checkpoint" ]]; then
  ok "first run started from step 0 and saved model-50 and model-100"
else
  fail "first run with --checkpoint_dir" "$out"
fi
out=$("$bin" --steps=150 --log_every=50 --checkpoint_dir="$ckpt" 2>&1)
status=$?
resumed_150=$(loss_at "$out" 150)
if [[ $status -eq 0 && "$out" == *"restored $ckpt/model-100: resuming from global step 100"* &&
      "$out" == *"trained steps 101..150"* && "$out" != *"step 50/"* && -n "$resumed_150" ]]; then
  ok "second run resumed from global step 100 and trained steps 101..150"
else
  fail "second run did not resume from step 100" "$out"
fi
if [[ -n "$resumed_150" && -n "$full_150" ]] &&
   holds "($resumed_150 - $full_150)^2" '<' "(0.03 * $full_150)^2"; then
  ok "resumed loss over steps 101-150 ($resumed_150) matches the uninterrupted run's ($full_150)"
else
  fail "resumed loss over steps 101-150 '$resumed_150' differs from the uninterrupted '$full_150'"
fi
out=$("$bin" --steps=150 --checkpoint_dir="$ckpt" 2>&1)
if [[ $? -eq 0 && "$out" == *"global step 150 >= --steps=150: nothing to train"* &&
      "$(tail -n 1 <<<"$out")" =~ ^test_accuracy=0\.[0-9]{4}$ ]]; then
  ok "a finished run only evaluates"
else
  fail "third run at the last step" "$out"
fi

# 3. --logdir: TensorBoard event files with loss and accuracy every
#    --log_every steps and test_accuracy, read back by tests/tfevents.py.
logs="$tmp/logs"
rm -rf "$logs"
out=$("$bin" --steps=60 --log_every=20 --logdir="$logs" 2>&1)
status=$?
scalars=$(/usr/bin/python3 "$(dirname "$0")/tfevents.py" "$logs" 2>&1)
tags=$(awk '{ print $1, $2 }' <<<"$scalars" | tr '\n' ' ')
want="20 loss 20 accuracy 40 loss 40 accuracy 60 loss 60 accuracy 60 test_accuracy "
if [[ $status -eq 0 && "$tags" == "$want" ]] &&
   awk '$2 ~ /accuracy/ && !($3 >= 0 && $3 <= 1) { exit 1 } $2 == "loss" && !($3 > 0) { exit 1 }' \
     <<<"$scalars"; then
  ok "--logdir: loss and accuracy at steps 20, 40, 60 and test_accuracy in $(ls "$logs")"
else
  fail "--logdir: expected '$want', read '$tags' (exit $status)" "$out
$scalars"
fi
out=$("$bin" --steps=1 --logdir="$tmp/ckpt/checkpoint/logs" 2>&1)
if [[ $? -eq 1 && "$out" == *"SummaryWriter: logdir '$tmp/ckpt/checkpoint/logs'"* ]]; then
  ok "--logdir under a file: exit 1 naming the logdir"
else
  fail "--logdir under a file: expected exit 1 naming the logdir" "$out"
fi

# 4. --export_dir: a SavedModel that tg_run loads and runs by signature key on
#    the first 20 test images (read here by Python from the IDX files): the
#    probabilities of each image sum to 1, and the classes are mostly right.
export="$tmp/export/1"
rm -rf "$tmp/export"
out=$("$bin" --steps=300 --log_every=300 --export_dir="$export" 2>&1)
if [[ $? -eq 0 && "$out" == *"exported $export (signature serving_default"* &&
      -f "$export/saved_model.pb" && -f "$export/variables/variables.index" ]]; then
  ok "--export_dir wrote a SavedModel"
else
  fail "--export_dir" "$out"
fi
read -r images labels < <(/usr/bin/python3 - "$data" <<'PY'
import gzip, struct, sys
with gzip.open(sys.argv[1] + "/t10k-images-idx3-ubyte.gz") as f:
    magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
    pixels = f.read(20 * rows * cols)
with gzip.open(sys.argv[1] + "/t10k-labels-idx1-ubyte.gz") as f:
    f.read(8)
    labels = f.read(20)
images = ",".join("[" + ",".join("%.9g" % (p / 255.0) for p in pixels[i * 784:(i + 1) * 784]) + "]"
                  for i in range(20))
print("[%s] %s" % (images, ",".join(str(l) for l in labels)))
PY
)
out=$("$tg_run" --saved_model="$export" --input="images=$images" 2>&1)
status=$?
classes=$(sed -nE 's/^classes int64 \[20\] \[(.*)\]$/\1/p' <<<"$out")
sums=$(sed -nE 's/^probabilities float \[20,10\] \[\[(.*)\]\]$/\1/p' <<<"$out" |
       awk -v RS='\\],\\[' -F, '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.4f ", s }')
right=$(awk -F, -v want="$labels" 'BEGIN { split(want, w, ",") }
        { for (i = 1; i <= NF; i++) if ($i == w[i]) n++ } END { print n + 0 }' <<<"$classes")
if [[ $status -eq 0 && -n "$classes" && "$sums" == "$(printf '1.0000 %.0s' {1..20})" ]] &&
   (( right >= 12 )); then
  ok "tg_run ran the export: $right of 20 test images classified right, probabilities sum to 1"
else
  fail "tg_run --saved_model on the export: exit $status, $right right, sums [$sums]" "$out"
fi

# An export directory that exists is refused before any training (a run of
# a million steps would otherwise not end within the test's time).
out=$(timeout 60 "$bin" --steps=1000000 --export_dir="$export" 2>&1)
status=$?
if [[ $status -eq 1 && "$out" == *"ALREADY_EXISTS: --export_dir '$export' already exists"* &&
      "$out" != *"step "* ]]; then
  ok "an existing --export_dir is refused before training"
else
  fail "an existing --export_dir: expected exit 1 before training, got $status" "$out"
fi

# 5. Errors: a missing data directory names the package; bad flags are usage errors.
out=$("$bin" --data_dir="$tmp/nowhere" 2>&1)
status=$?
if [[ $status -eq 1 && "$out" == *"NOT_FOUND"* && "$out" == *"dataset-fashion-mnist"* ]]; then
  ok "missing data: exit 1 naming dataset-fashion-mnist"
else
  fail "missing data: expected exit 1 naming the package, got $status" "$out"
fi
for flag in --steps=0 --batch_size=x --learning_rate=-1 --bogus; do
  out=$("$bin" "$flag" 2>&1)
  status=$?
  if [[ $status -eq 2 && "$out" == *"usage: fashion_mnist"* ]]; then
    ok "$flag: usage error"
  else
    fail "$flag: expected exit 2 with usage, got $status" "$out"
  fi
done
exit $failures
