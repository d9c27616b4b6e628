"""A repository rule that turns installed system libraries into Bazel targets.

Each entry of `libraries` maps a target name to pkg-config modules. Link flags
come from `pkg-config --libs` at fetch time, so Debian updates need no edits
here. A library Debian ships without a pkg-config file (oneDNN) is named in
`plain_libraries` with the file that must exist and the -l name to link. Header-only include trees that live outside /usr/include (Eigen) are
symlinked into the repository and exposed with `includes`.
"""

def _pkg_config(ctx, args):
    result = ctx.execute(["pkg-config"] + args)
    if result.return_code != 0:
        fail("pkg-config %s failed: %s\nInstall the missing -dev package (see README)." %
             (" ".join(args), result.stderr))
    return result.stdout.strip()

def _quote(items):
    return "[" + ", ".join(['"%s"' % i for i in items]) + "]"

def _system_libs_impl(ctx):
    build = ['package(default_visibility = ["//visibility:public"])', ""]
    for name, modules in ctx.attr.libraries.items():
        linkopts = _pkg_config(ctx, ["--libs"] + modules.split(" ")).split(" ")
        linkopts = [f for f in linkopts if f]
        build.append("cc_library(name = \"%s\", linkopts = %s)" % (name, _quote(linkopts)))

    for name, spec in ctx.attr.plain_libraries.items():
        path, lib = spec.split(" ")
        if not ctx.path(path).exists:
            fail("%s is missing: install the -dev package that provides it (scripts/setup.sh)." % path)
        build.append("cc_library(name = \"%s\", linkopts = [\"-l%s\"])" % (name, lib))

    for name, path in ctx.attr.include_trees.items():
        ctx.symlink(path, name + "_include")
        build.append(
            "cc_library(name = \"%s\", hdrs = glob([\"%s_include/**\"]), includes = [\"%s_include\"])" %
            (name, name, name),
        )
    for name, path in ctx.attr.programs.items():
        ctx.symlink(path, name)
        build.append("exports_files([\"%s\"])" % name)
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    ctx.file("BUILD", "\n".join(build) + "\n")

system_libs = repository_rule(
    implementation = _system_libs_impl,
    attrs = {
        "libraries": attr.string_dict(doc = "target name -> space-separated pkg-config modules"),
        "plain_libraries": attr.string_dict(doc = "target name -> 'header-or-library-path libname'"),
        "include_trees": attr.string_dict(doc = "target name -> absolute header directory"),
        "programs": attr.string_dict(doc = "file name -> absolute path of a host program"),
    },
    local = True,
)
