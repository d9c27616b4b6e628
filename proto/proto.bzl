"""Compiles .proto files with the system protoc (and grpc_cpp_plugin for services)."""

def tg_proto_library(name, srcs = [], deps = [], grpc_srcs = []):
    """One cc_library over the C++ generated from `srcs` (messages) and `grpc_srcs` (services).

    Import paths are workspace-relative: `import "proto/tensor.proto";`.
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
    files = " ".join(["%s/%s" % (pkg, s) for s in srcs + grpc_srcs])
    cmd = "$(location @system//:protoc) -I. --cpp_out=$(GENDIR) " + files
    tools = ["@system//:protoc"]
    if grpc_srcs:
        cmd += (" && $(location @system//:protoc) -I. --grpc_out=$(GENDIR)" +
                " --plugin=protoc-gen-grpc=$(location @system//:grpc_cpp_plugin) " +
                " ".join(["%s/%s" % (pkg, s) for s in grpc_srcs]))
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
