"""A C++ toolchain for clang, configured the way Bazel configures the default one.

Bazel 4's auto-configured toolchain (@local_config_cc) takes its compiler from
the CC environment variable, once, when the repository is fetched: switching
compilers that way refetches it and invalidates every C++ action of the
default build. This rule runs the same autoconfiguration under a name of its
own with `compiler` as the compiler, so a build selects it with
--crosstool_top=@<name>//:toolchain (.bazelrc's --config=fuzz does) and the
default gcc toolchain is left alone. The repository is fetched only by a build
that asks for it: a machine without clang builds everything else as before.
"""

load("@bazel_tools//tools/cpp:cc_configure.bzl", "cc_autoconf_impl")

def _clang_toolchain_impl(ctx):
    compiler = ctx.which(ctx.attr.compiler)
    if compiler == None:
        fail("%s not found: run scripts/setup.sh (it installs clang-14 and libclang-rt-14-dev)" %
             ctx.attr.compiler)
    cc_autoconf_impl(ctx, overriden_tools = {"gcc": str(compiler)})

clang_toolchain = repository_rule(
    implementation = _clang_toolchain_impl,
    attrs = {
        "compiler": attr.string(doc = "the clang driver to use, found on PATH (clang-14)"),
    },
    local = True,
    configure = True,
)
