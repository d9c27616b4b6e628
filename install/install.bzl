"""What scripts/install.sh installs: one shared library and the headers it serves.

tg_shared_library links every object file of tensorgrid's own libraries in
`deps`' closure into one versioned shared library. It does not rely on
alwayslink: a cc_binary(linkshared = 1) pulls an object out of a library only
when something refers to it, which would drop kernel and session
registrations (static initialisers nobody names) and any API no dependency
happens to call. Libraries from other repositories (@system's Debian
libraries, @local_cuda) are linked as the ordinary link would: by their flags.

tg_public_headers copies the headers of the same closure (sources and
generated ones, such as proto/*.pb.h and client/ops/*.h) into one directory,
at their include paths.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _own(ctx, owner):
    """Whether a label belongs to the repository this rule is in (tensorgrid)."""
    return owner.workspace_name == ctx.label.workspace_name

def _shared_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    objects, flags, others = [], [], []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            if not _own(ctx, linker_input.owner):
                others.append(linker_input)
                continue
            flags += linker_input.user_link_flags
            for library in linker_input.libraries:
                objects += library.pic_objects or library.objects or []
    if not objects:
        fail("%s: no object files in deps" % ctx.label)

    major = ctx.attr.version.split(".")[0]
    soname = "lib%s.so.%s" % (ctx.attr.library, major)
    linked = cc_common.link(
        actions = ctx.actions,
        name = ctx.attr.library,
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        compilation_outputs = cc_common.create_compilation_outputs(
            objects = depset(objects),
            pic_objects = depset(objects),
        ),
        linking_contexts = [cc_common.create_linking_context(linker_inputs = depset(others))],
        user_link_flags = flags + ["-Wl,-soname," + soname],
        output_type = "dynamic_library",
    )
    library = linked.library_to_link.resolved_symlink_dynamic_library or \
              linked.library_to_link.dynamic_library

    # The file as installed: lib<library>.so.<version>.
    versioned = ctx.actions.declare_file("lib%s.so.%s" % (ctx.attr.library, ctx.attr.version))
    ctx.actions.run_shell(
        inputs = [library],
        outputs = [versioned],
        command = 'cp "$1" "$2"',
        arguments = [library.path, versioned.path],
        mnemonic = "CopySharedLibrary",
    )
    return [DefaultInfo(files = depset([versioned]), runfiles = ctx.runfiles(files = [versioned]))]

tg_shared_library = rule(
    implementation = _shared_library_impl,
    doc = "lib<library>.so.<version>, with SONAME lib<library>.so.<major>.",
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "library": attr.string(mandatory = True, doc = "the name between lib and .so"),
        "version": attr.string(mandatory = True, doc = "major.minor.patch"),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

def _public_headers_impl(ctx):
    headers = {}
    for dep in ctx.attr.deps:
        for header in dep[CcInfo].compilation_context.headers.to_list():
            if _own(ctx, header.owner):
                # short_path is "../tensorgrid/client/scope.h" when tensorgrid is not the main repository.
                path = header.short_path
                if path.startswith("../"):
                    path = path.split("/", 2)[2]
                headers[path] = header
    out = ctx.actions.declare_directory(ctx.label.name)
    args = ctx.actions.args()
    args.add(out.path)
    for path, header in sorted(headers.items()):
        args.add_all([header, path])
    ctx.actions.run_shell(
        inputs = headers.values(),
        outputs = [out],
        # Pairs of (file, include path) after the output directory.
        command = """out="$1"; shift
while [ $# -gt 0 ]; do
  mkdir -p "$out/$(dirname "$2")" && cp "$1" "$out/$2" || exit 1
  shift 2
done""",
        arguments = [args],
        mnemonic = "CopyHeaders",
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

tg_public_headers = rule(
    implementation = _public_headers_impl,
    doc = "A directory of deps' own headers at their include paths.",
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)
