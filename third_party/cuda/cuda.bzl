"""cuda_library: CUDA sources compiled by nvcc into a cc_library.

Each `.cu.cc` in `srcs` becomes one object (nvcc, sm_90 machine code plus
compute_90 PTX for newer GPUs; `-gencode` via TG_CUDA_ARCHS is not needed
yet). Keep CUDA sources to kernels and their launchers with plain C++
signatures (pointers, sizes, cudaStream_t), declared in `.cu.h` headers
that include nothing heavier than <cstdint> and the CUDA runtime: the
OpKernels around them are ordinary C++ compiled by the usual compiler.
Without a toolkit the library is empty.
"""

load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "NVCC")

_NVCC_FLAGS = " ".join([
    "-x cu",
    "-std=c++17",
    "-O3",
    "-Xcompiler=-fPIC",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
    "--expt-relaxed-constexpr",
])

def cuda_library(name, srcs, hdrs = [], deps = [], **kwargs):
    """A cc_library of nvcc-built objects; `hdrs` are the launchers' declarations."""
    objs = []

    # Includes are relative to tensorgrid's root: "." in the main workspace,
    # "external/tensorgrid" in a workspace that uses tensorgrid.
    root = Label("%s//%s" % (native.repository_name(), native.package_name())).workspace_root
    flags = _NVCC_FLAGS + " -I" + (root or ".")
    if CUDA_AVAILABLE:
        for src in srcs:
            obj = src.replace(".cu.cc", ".cu.o")
            native.genrule(
                name = name + "_" + src.replace("/", "_").replace(".", "_"),
                srcs = [src] + hdrs,
                outs = [obj],
                cmd = "%s %s -c $(location %s) -o $@" % (NVCC, flags, src),
            )
            objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@local_cuda//:cudart"],
        **kwargs
    )
