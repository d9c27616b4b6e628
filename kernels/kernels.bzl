"""One macro per kernel family: every .cc is the library, every *_test.cc a test."""

# GCC 12 reports reads of uninitialized values inside its own AVX-512
# intrinsics headers wherever Eigen's packet math inlines them (GCC bug
# 105593). The reports are false; this is the one place that silences them,
# for the kernels (the code that instantiates Eigen's math) and their tests.
# -Wuninitialized (a definite read) stays on. clang (the sanitizer builds)
# has neither the bug nor the option.
EIGEN_COPTS = select({
    "//kernels:clang": [],
    "//conditions:default": ["-Wno-maybe-uninitialized"],
})

def tg_kernel_family(name, deps = [], test_deps = [], op_deps = None):
    """Defines :<name> (alwayslink, so registrations are kept) and one cc_test per *_test.cc.

    The library depends on the definitions of the ops it implements: `op_deps`,
    by default //ops:<name>_ops.
    """
    if op_deps == None:
        op_deps = ["//ops:%s_ops" % name]
    tests = native.glob(["*_test.cc"])
    native.cc_library(
        name = name,
        srcs = native.glob(["*.cc"], exclude = tests + ["*_benchmark.cc"]),
        hdrs = native.glob(["*.h"]),
        deps = [
            "//core/framework",
            "//core/platform",
            "//kernels:index_values",
            "@system//:eigen",
        ] + op_deps + deps,
        copts = EIGEN_COPTS,
        alwayslink = True,
        visibility = ["//visibility:public"],
    )
    for t in tests:
        native.cc_test(
            name = t[:-len(".cc")],
            srcs = [t],
            copts = EIGEN_COPTS,
            deps = [
                ":" + name,
                "//kernels:ops_testutil",
                "@system//:gtest_main",
            ] + test_deps,
            size = "small",
        )
