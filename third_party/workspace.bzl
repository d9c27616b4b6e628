"""tensorgrid_dependencies(): every repository tensorgrid builds with, offline.

tensorgrid's own WORKSPACE calls it, and so does a workspace that uses a
tensorgrid checkout as a repository (docs/BUILDING.md):

    local_repository(name = "tensorgrid", path = "/path/to/tensorgrid")
    load("@tensorgrid//third_party:workspace.bzl", "tensorgrid_dependencies")
    tensorgrid_dependencies()

tensorgrid's BUILD files name these repositories (@system, @local_cuda, ...),
so they must keep these names in any workspace. A repository the calling
workspace has already declared is left as it is. The directories shipped in
this checkout (third_party/rules_cc, third_party/remote_coverage_tools) are
found from this file's own label, so the paths hold wherever the checkout is.
"""

load("//third_party/clang:clang_toolchain.bzl", "clang_toolchain")
load("//third_party/cuda:cuda_configure.bzl", "cuda_configure")
load("//third_party/system:system_libs.bzl", "system_libs")

def _checkout_directory_impl(ctx):
    # third_party/BUILD's directory in this checkout, wherever it is.
    source = ctx.path(Label("//third_party:BUILD")).dirname.get_child(ctx.attr.directory)
    if not source.exists:
        fail("%s: %s is missing from the tensorgrid checkout" % (ctx.name, source))
    for entry in source.readdir():
        ctx.symlink(entry, entry.basename)

# A repository made of a directory under this checkout's third_party/ (a
# local_repository's path would be relative to the calling workspace).
_checkout_directory = repository_rule(
    implementation = _checkout_directory_impl,
    attrs = {"directory": attr.string(doc = "the directory under third_party/")},
    local = True,
)

def _declare(rule, name, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def tensorgrid_dependencies():
    """Declares @rules_cc, @remote_coverage_tools, @rules_java, @platforms, @system, @local_cuda and @local_config_clang."""

    # Repositories Bazel 4 would otherwise download (docs/BUILDING.md).
    _declare(_checkout_directory, "rules_cc", directory = "rules_cc")
    _declare(_checkout_directory, "remote_coverage_tools", directory = "remote_coverage_tools")
    _declare(native.local_repository, "rules_java", path = "/usr/share/bazel/rules/java")
    _declare(native.local_repository, "platforms", path = "/usr/share/bazel/tools/platforms")

    # Debian's libraries and programs, found by pkg-config.
    _declare(
        system_libs,
        "system",
        include_trees = {"eigen": "/usr/include/eigen3"},
        plain_libraries = {
            "dnnl": "/usr/include/oneapi/dnnl/dnnl.hpp dnnl",
            "leveldb": "/usr/include/leveldb/table.h leveldb",
        },
        libraries = {
            "absl": "absl_status absl_statusor absl_strings absl_str_format absl_synchronization absl_flat_hash_map absl_hash absl_time",
            "benchmark": "benchmark",
            "gmock": "gmock",
            "grpcpp": "grpc++ protobuf",
            "gtest": "gtest",
            "gtest_main": "gtest_main",
            "protobuf": "protobuf",
            "tbb": "tbb",
            "zlib": "zlib",
        },
        programs = {
            "protoc": "/usr/bin/protoc",
            "grpc_cpp_plugin": "/usr/bin/grpc_cpp_plugin",
        },
    )

    # The CUDA toolkit, when there is one (third_party/cuda/cuda_configure.bzl).
    _declare(cuda_configure, "local_cuda")

    # clang-14 as a second C++ toolchain, for the sanitizer and fuzzing builds
    # (--config=asan/fuzz/tsan, docs/fuzzing.md). Fetched only by builds that
    # select it.
    _declare(clang_toolchain, "local_config_clang", compiler = "clang-14")
