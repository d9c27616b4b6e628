"""Compiles .proto files with the system protoc (and grpc_cpp_plugin for services)."""

def tg_proto_library(name, srcs = [], deps = [], grpc_srcs = []):
    """One cc_library over the C++ generated from `srcs` (messages) and `grpc_srcs` (services).

    Import paths are relative to tensorgrid's root (`import "proto/tensor.proto";`),
    whether tensorgrid is the main workspace or a repository of another one:
    protoc runs with that repository's root as its import path and writes
    under the same root in the output tree.
    """
    outs = []
    for s in srcs + grpc_srcs:
        base = s[:-len(".proto")]
        outs += [base + ".pb.h", base + ".pb.cc"]
    grpc_outs = []
    for s in grpc_srcs:
        base = s[:-len(".proto")]
        grpc_outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
    pkg = native.package_name()

    # "" in the main workspace, "external/tensorgrid" in another one: protoc's
    # import path, where the sources are, and where the outputs go.
    root = Label("%s//%s" % (native.repository_name(), pkg)).workspace_root
    prefix = root + "/" if root else ""
    protoc = "$(location @system//:protoc) -I" + (root or ".")
    files = " ".join(["%s%s/%s" % (prefix, pkg, s) for s in srcs + grpc_srcs])
    out = "$(GENDIR)" + ("/" + root if root else "")
    cmd = "%s --cpp_out=%s %s" % (protoc, out, files)
    tools = ["@system//:protoc"]
    if grpc_srcs:
        cmd += (" && %s --grpc_out=%s" % (protoc, out) +
                " --plugin=protoc-gen-grpc=$(location @system//:grpc_cpp_plugin) " +
                " ".join(["%s%s/%s" % (prefix, pkg, s) for s in grpc_srcs]))
        tools.append("@system//:grpc_cpp_plugin")
    native.genrule(
        name = name + "_gen",
        srcs = srcs + grpc_srcs + [d + "_srcs" for d in deps],
        outs = outs + grpc_outs,
        cmd = cmd,
        tools = tools,
    )
    native.filegroup(name = name + "_srcs", srcs = srcs + grpc_srcs)
    native.cc_library(
        name = name,
        srcs = [o for o in outs + grpc_outs if o.endswith(".cc")],
        hdrs = [o for o in outs + grpc_outs if o.endswith(".h")],
        deps = deps + ["@system//:grpcpp" if grpc_srcs else "@system//:protobuf"],
    )
