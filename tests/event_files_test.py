#!/usr/bin/python3
"""TensorBoard event files written by tensorgrid, read back independently.

tests/write_event_files writes a SummaryWriter's file and a
MonitoredTrainingSession's (summary_dir); tests/tfevents.py, which shares
no code with tensorgrid, checks the file names, both masked CRCs of every
record and decodes the Event protos by hand. The checks: TensorFlow's file
name, "brain.Event:2" first, the graph's nodes, every tag, step and value,
wall times within the run. The reader itself must reject a flipped bit and
a cut file. Where Python has `tensorboard` (the GPU machines), its own
event loader reads the files too; elsewhere that part says it did not run.

usage: event_files_test.py WRITE_EVENT_FILES
"""
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfevents  # noqa: E402  (beside this file)

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def f32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def one_file(logdir, start, end):
    files = tfevents.event_files(logdir)
    check(len(files) == 1, "%s holds one event file: %s" % (logdir, files))
    name = os.path.basename(files[0])
    m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)", name)
    check(m is not None and m.group(2) == socket.gethostname(),
          "file name is events.out.tfevents.<10 digits>.<hostname>: " + name)
    if m:
        check(int(start) - 1 <= int(m.group(1)) <= end + 1, "its seconds are the run's: " + name)
    return files[0]


def check_header_and_times(events, start, end, what):
    check(events[0].get("file_version") == "brain.Event:2" and "summary" not in events[0],
          what + ": first event is file_version brain.Event:2")
    times = [e["wall_time"] for e in events]
    check(all(start - 1 <= t <= end + 1 for t in times), what + ": wall times within the run")
    check(times == sorted(times), what + ": wall times never go back")


def check_direct(path, start, end):
    events = tfevents.read_events(path)
    check(len(events) == 8, "direct: 8 events (version, graph, 6 summaries): %d" % len(events))
    if len(events) != 8:
        return
    check_header_and_times(events, start, end, "direct")
    nodes = tfevents.graph_node_names(events[1].get("graph_def", b""))
    check({"x", "twice"} <= set(nodes),
          "direct: the graph's nodes include x and twice: %s" % nodes)
    losses = [1.5, 0.75, -2.25, 2.0 ** -10, 2.0 ** 127]
    for step, want in enumerate(losses):
        e = events[2 + step]
        check(e["step"] == step and e.get("summary") == [("loss", f32(want))],
              "direct: step %d loss %r: %r" % (step, want, e))
    e = events[7]
    check(e["step"] == 5 and e.get("summary") == [("loss", 0.5), ("accuracy", 0.875)],
          "direct: step 5 loss 0.5 and accuracy 0.875 in one event: %r" % e)


def check_hook(path, start, end):
    events = tfevents.read_events(path)
    check(len(events) == 5, "hook: 5 events (version, graph, steps 1, 3, 5): %d" % len(events))
    if len(events) != 5:
        return
    check_header_and_times(events, start, end, "hook")
    nodes = set(tfevents.graph_node_names(events[1].get("graph_def", b"")))
    check({"global_step", "x", "twice", "train"} <= nodes,
          "hook: the graph has global_step, x, twice, train")
    for e, step in zip(events[2:], [1, 3, 5]):
        values = dict(e.get("summary", []))
        check(e["step"] == step and values.get("twice") == 2.0 * step,
              "hook: step %d twice = %g: %r" % (step, 2.0 * step, e))
        if step > 1:
            rate = values.get("global_step/sec")
            check(rate is not None and rate > 0, "hook: step %d global_step/sec > 0: %r" % (step, rate))


def check_reader_rejects_damage(path, tmp):
    with open(path, "rb") as f:
        data = f.read()
    cases = {
        "a flipped bit in the last record's data": data[:-6] + bytes([data[-6] ^ 4]) + data[-5:],
        "a flipped bit in the first length": bytes([data[0] ^ 1]) + data[1:],
        "a cut file": data[:-3],
    }
    for what, damaged in cases.items():
        bad = os.path.join(tmp, "damaged")
        with open(bad, "wb") as f:
            f.write(damaged)
        try:
            tfevents.read_records(bad)
            check(False, "the reader rejects " + what)
        except tfevents.FormatError as e:
            check(True, "the reader rejects %s (%s)" % (what, e))


def check_with_tensorboard(logdir):
    try:
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError:
        print("not run: TensorBoard's own event loader (no `tensorboard` module in this Python)")
        return
    acc = event_accumulator.EventAccumulator(os.path.join(logdir, "direct"))
    acc.Reload()
    scalars = [(s.step, s.value) for s in acc.Scalars("loss")]
    check(scalars[:3] == [(0, 1.5), (1, 0.75), (2, -2.25)] and scalars[-1] == (5, 0.5),
          "tensorboard: loss scalars %r" % scalars)
    check(len(acc.Graph().node) >= 2, "tensorboard: the graph loads")
    acc = event_accumulator.EventAccumulator(os.path.join(logdir, "hook"))
    acc.Reload()
    check([(s.step, s.value) for s in acc.Scalars("twice")] == [(1, 2.0), (3, 6.0), (5, 10.0)],
          "tensorboard: the hook's twice scalars")


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    check(tfevents.crc32c(b"123456789") == 0xE3069283, "the reader's CRC-32C check value")
    tmp = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
    logdir = os.path.join(tmp, "logs")
    start = time.time()
    run = subprocess.run([argv[1], logdir], capture_output=True, text=True, timeout=120)
    end = time.time()
    check(run.returncode == 0, "write_event_files ran: %s" % run.stderr.strip())
    if run.returncode != 0:
        return 1
    try:
        direct = one_file(os.path.join(logdir, "direct"), start, end)
        check_direct(direct, start, end)
        check_hook(one_file(os.path.join(logdir, "hook"), start, end), start, end)
        check_reader_rejects_damage(direct, tmp)
    except tfevents.FormatError as e:
        check(False, "the files parse: %s" % e)
    check_with_tensorboard(logdir)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
