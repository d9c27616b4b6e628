#!/usr/bin/env python3
"""Counts the test cases of one `bazel test` run, exactly; scripts/test.sh's end.

    count_tests.py --events=BEP.json --test_status=N --targets=TESTS.txt \
        --query_status=N --query_errors=QUERY.err

--events is the run's Build Event Protocol file (--build_event_json_file), the
only place results are read from: a test.xml counts only when this run's
testResult event names it, so an earlier run's file never does. --targets is
`bazel query 'tests(//...)'` (its exit status and stderr too: with
--keep_going it names the packages that failed to load and exits 3).

A test case is a gtest case of a target's test.xml, or the one case of a shell
test (Bazel's generated test.xml, or the one tests/skip_lib.sh writes). A case
with a <failure> or <error> failed; else one that is skipped (GTEST_SKIP, a
<skipped> element) or not run (a DISABLED_ test) is skipped; else it passed.
Counted as one failure each, by name: a test target with no result of this
run (it failed to build, or never ran), a target that failed to build, a
package that failed to load, a test whose status is not a pass while its
test.xml shows no failed case (a crash, a timeout), and an exit status of
Bazel's that none of these explains.

Prints one "failed: ..." line per failure, then
    N skipped: //pkg:target (reason), //pkg:target Suite.Case (reason), ...
    N passed, N failed
and exits 1 when anything failed.
"""
import argparse
import json
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ElementTree

PASSING = ("PASSED", "FLAKY")
# Bazel's exit statuses (ExitCode.java) that a counted failure explains.
BUILD_FAILURE, TESTS_FAILED = 1, 3


class Count:
    def __init__(self):
        self.passed = 0
        self.failed = []  # "//pkg:target Suite.Case (reason)"
        self.skipped = []

    def fail(self, name, reason=""):
        self.failed.append(f"{name} ({reason})" if reason else name)


def read_events(path):
    """The events of a BEP JSON file, one object a line; a torn last line (a
    Bazel that was killed) is dropped, and the missing buildFinished says so."""
    events = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    break
    except OSError:
        pass
    return events


def first_line(text):
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def path_of(uri):
    return urllib.parse.unquote(urllib.parse.urlparse(uri).path)


class Run:
    """What the BEP file says: test targets, their results, build failures."""

    def __init__(self, events):
        self.tests = set()  # labels of configured test targets
        self.results = {}  # (label, run, shard) -> (attempt, testResult payload)
        self.broken = {}  # label -> why it has no outputs (failed to build, aborted)
        self.skipped = set()  # labels Bazel skipped (target_compatible_with)
        self.finished = None  # buildFinished's exit code, when it came
        for e in events:
            kind, ident = next(iter((e.get("id") or {"": {}}).items()))
            label = ident.get("label", "") if isinstance(ident, dict) else ""
            if kind == "targetConfigured" and "configured" in e:
                if e["configured"].get("testSize") or e["configured"].get(
                        "targetKind", "").endswith("_test rule"):
                    self.tests.add(label)
            elif kind == "testResult" and "testResult" in e:
                key = (label, ident.get("run", 1), ident.get("shard", 1))
                attempt = ident.get("attempt", 1)
                if key not in self.results or self.results[key][0] < attempt:
                    self.results[key] = (attempt, e["testResult"])
            elif kind == "targetCompleted" and "completed" in e:
                completed = e["completed"]
                if not completed.get("success"):
                    self.broken[label] = "failed to build"  # Bazel's output above says why
            elif kind == "buildFinished" and "finished" in e:
                self.finished = e["finished"].get("exitCode", {}).get("code", 0)
            if "aborted" in e and label and kind in ("targetConfigured", "targetCompleted",
                                                     "testResult", "testSummary"):
                reason = e["aborted"].get("reason", "ABORTED")
                if reason == "SKIPPED":  # incompatible with the platform: not built, by design
                    self.skipped.add(label)
                else:
                    self.broken.setdefault(label, reason.lower().replace("_", " "))


def test_xml_of(result):
    for output in result.get("testActionOutput", []):
        if output.get("name") == "test.xml":
            return path_of(output.get("uri", ""))
    return None


def skip_reason(case):
    """GTEST_SKIP's message is "file:line\\nwhat"; keep the what."""
    skipped = case.find("skipped")
    message = skipped.get("message", "") if skipped is not None else ""
    lines = [l.strip() for l in message.splitlines() if l.strip()]
    if len(lines) > 1 and re.match(r"^\S+:\d+$", lines[0]):
        lines = lines[1:]
    if lines:
        return " ".join(lines)
    return "disabled" if case.get("result") == "suppressed" else "skipped"


def cases_of(label, path):
    """[(name, outcome, why)] of a test.xml; None when it is missing or
    unreadable. A lone case named after the target is the target itself."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    cases = root.findall(".//testcase")
    target_names = {label, label.lstrip("/").replace(":", "/")}
    out = []
    for case in cases:
        name = case.get("name", "")
        suite = case.get("classname", "")
        if len(cases) == 1 and name in target_names:
            full = label
        else:
            full = f"{label} {suite}.{name}" if suite else f"{label} {name}"
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        if failure is not None:
            # A lone case named after the target is Bazel's for a shell test or
            # a crash: its message ("exited with error code 134") says how.
            why = first_line(failure.get("message")) if full == label else ""
            out.append((full, "failed", why))
        elif (case.find("skipped") is not None or case.get("result") in ("skipped", "suppressed")
              or case.get("status") == "notrun"):
            out.append((full, "skipped", skip_reason(case)))
        else:
            out.append((full, "passed", ""))
    return out


def count_result(count, label, result):
    status = result.get("status", "NO_STATUS")
    path = test_xml_of(result)
    cases = cases_of(label, path) if path else None
    any_failed = False
    for name, outcome, reason in cases or []:
        if outcome == "passed":
            count.passed += 1
        elif outcome == "skipped":
            count.skipped.append(f"{name} ({reason})")
        else:
            count.fail(name, reason)
            any_failed = True
    if status in PASSING:
        if not cases:
            count.passed += 1
    elif not any_failed:
        # A crash, a timeout or a bad exit status after every case passed.
        count.fail(label, status.lower().replace("_", " ") +
                   ("" if cases else ", no test.xml from this run"))


def loading_failures(errors):
    """Packages `bazel query --keep_going` could not load, from its stderr."""
    packages = []
    for pattern in (r"package contains errors: (\S+)", r"error loading package '([^']*)'",
                    r"no such package '([^']*)'"):
        for package in re.findall(pattern, errors):
            if package not in packages:
                packages.append(package)
    return packages


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", required=True)
    parser.add_argument("--test_status", type=int, required=True)
    parser.add_argument("--targets", required=True)
    parser.add_argument("--query_status", type=int, required=True)
    parser.add_argument("--query_errors", required=True)
    args = parser.parse_args()

    count = Count()
    run = Run(read_events(args.events))
    with open(args.targets, encoding="utf-8") as f:
        expected = {line.strip() for line in f if line.strip()}
    with open(args.query_errors, encoding="utf-8", errors="replace") as f:
        errors = f.read()

    results_by_label = {}
    for (label, _, _), (_, result) in sorted(run.results.items()):
        results_by_label.setdefault(label, []).append(result)
    for label in sorted(expected | run.tests | set(results_by_label)):
        if label not in results_by_label:
            if label in run.skipped and label not in run.broken:
                count.skipped.append(f"{label} (incompatible with this platform)")
            else:
                count.fail(label, run.broken.get(label, "no result from this run"))
            continue
        for result in results_by_label[label]:
            count_result(count, label, result)
    for label in sorted(set(run.broken) - expected - run.tests - set(results_by_label)):
        count.fail(label, run.broken[label])  # a library or binary that failed to build
    packages = loading_failures(errors)
    for package in packages:
        count.fail(f"//{package}", "package failed to load")
    if args.query_status != 0 and not packages:
        count.fail("bazel query 'tests(//...)'",
                   f"exit status {args.query_status}: {first_line(errors) or 'no message'}")

    explained = bool(count.failed)
    if run.finished is None:
        count.fail("bazel test", f"exit status {args.test_status}, its build events end early")
    elif args.test_status not in (0, BUILD_FAILURE, TESTS_FAILED) or (
            args.test_status != 0 and not explained):
        count.fail("bazel test", f"exit status {args.test_status}, no failure above explains it")
    if count.passed + len(count.failed) + len(count.skipped) == 0:
        count.fail("bazel test", "no test ran")

    for name in count.failed:
        print(f"failed: {name}")
    print(f"{len(count.skipped)} skipped" + (": " + ", ".join(count.skipped) if count.skipped else ""))
    print(f"{count.passed} passed, {len(count.failed)} failed")
    return 1 if count.failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a bug here must not read as a green run
        print(f"failed: counting the results: {type(e).__name__}: {e}")
        print("0 skipped")
        print("0 passed, 1 failed")
        sys.exit(1)
