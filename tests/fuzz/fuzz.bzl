"""tg_fuzz_test: one fuzz target, built two ways from the same source.

tg_fuzz_test(name = "graphdef", deps = [...]) makes :graphdef_fuzzer from
graphdef_fuzzer.cc (which defines LLVMFuzzerTestOneInput):

  - in the default build, a cc_test whose main (replay_main.cc) runs every
    input of corpus/graphdef/ and regressions/graphdef/ once, so the ordinary
    test suite checks the seeds and every crash ever found, with gcc;
  - under --config=fuzz (clang, libFuzzer, ASan, UBSan), the same test is a
    libFuzzer binary: scripts/fuzz.sh runs it to fuzz, and `bazel test
    --config=fuzz` replays the same inputs under the sanitizers (-runs=0).

The seed corpus is required (the test fails without one); a dictionary, <name>.dict, is used by
scripts/fuzz.sh when it exists.
"""

def tg_fuzz_test(name, deps = [], size = "small", **kwargs):
    corpus = "corpus/" + name
    regressions = native.glob(["regressions/%s/*" % name])
    dirs = [corpus] + (["regressions/" + name] if regressions else [])
    native.cc_test(
        name = name + "_fuzzer",
        srcs = [name + "_fuzzer.cc"],
        size = size,
        deps = deps + [":fuzz_util"] + select({
            ":fuzzing": [],
            "//conditions:default": [":replay_main"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        # A target without seeds fails its test (replay_main.cc: no inputs).
        data = native.glob([corpus + "/*"]) + regressions,
        # Paths from the runfiles root, where a test runs: replay_main.cc
        # reads the directories; libFuzzer runs their inputs once (-runs=0).
        args = ["-runs=0"] + ["tests/fuzz/" + d for d in dirs],
        **kwargs
    )
