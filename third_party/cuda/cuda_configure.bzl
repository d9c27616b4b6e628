"""Finds the CUDA toolkit and makes it a repository: @local_cuda.

The toolkit is TG_CUDA_PATH when set, else /usr/local/cuda. TG_CUDA=0 turns
CUDA off. Without a toolkit (or with CUDA off) the repository still exists:
its defs.bzl says CUDA_AVAILABLE = False and its libraries are empty, so
everything that is not GPU code builds the same.

@local_cuda//:defs.bzl   CUDA_AVAILABLE, NVCC (the real path; a symlink to
                         nvcc elsewhere loses its headers), CUDA_PATH
@local_cuda//:headers    the toolkit's include/ (cuda_runtime.h, cublas_v2.h, nccl.h)
@local_cuda//:cudart     the CUDA runtime (shared: tests link their libraries dynamically)
@local_cuda//:cublas     cuBLAS (shared, found through the binary's rpath)
@local_cuda//:cudnn      cuDNN 9 (shared), when the toolkit has it: defs.bzl's
                         CUDNN_AVAILABLE says so
"""

def _cuda_configure_impl(ctx):
    path = ctx.os.environ.get("TG_CUDA_PATH", "/usr/local/cuda")
    enabled = ctx.os.environ.get("TG_CUDA", "1") != "0"
    nvcc = ctx.path(path + "/bin/nvcc")
    available = enabled and nvcc.exists
    build = ['package(default_visibility = ["//visibility:public"])', ""]
    if available:
        real = ctx.execute(["readlink", "-f", path]).stdout.strip()
        ctx.symlink(real + "/include", "cuda_include")
        lib = real + "/lib64"
        if not ctx.path(lib + "/libcudart.so").exists:
            lib = real + "/lib"
        build += [
            'cc_library(name = "headers", hdrs = glob(["cuda_include/**"]), includes = ["cuda_include"])',
            'cc_library(name = "cudart", deps = [":headers"], linkopts = ["-L%s", "-Wl,-rpath,%s", "-lcudart"])' % (lib, lib),
            'cc_library(name = "cublas", deps = [":cudart"], linkopts = ["-L%s", "-lcublas"])' % lib,
        ]
        cudnn = ctx.path(lib + "/libcudnn.so").exists and ctx.path(real + "/include/cudnn.h").exists
        if cudnn:
            build.append('cc_library(name = "cudnn", deps = [":cudart"], linkopts = ["-L%s", "-lcudnn"])' % lib)
        else:
            build.append('cc_library(name = "cudnn")')
        defs = 'CUDA_AVAILABLE = True\nCUDNN_AVAILABLE = %s\nNVCC = "%s/bin/nvcc"\nCUDA_PATH = "%s"\n' % (cudnn, real, real)
    else:
        build += [
            'cc_library(name = "headers")',
            'cc_library(name = "cudart")',
            'cc_library(name = "cublas")',
            'cc_library(name = "cudnn")',
        ]
        defs = 'CUDA_AVAILABLE = False\nCUDNN_AVAILABLE = False\nNVCC = ""\nCUDA_PATH = ""\n'
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    ctx.file("BUILD", "\n".join(build) + "\n")
    ctx.file("defs.bzl", defs)

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["TG_CUDA_PATH", "TG_CUDA"],
    local = True,
)
