"""tg_op_wrappers: the ops:: wrapper classes of one op family, generated at build time."""

# The op families (//ops:<family>) whose wrappers are generated as
# client/ops/<family>.{h,cc}; each has a FamilyDef in api_defs.cc.
# collective_ops (hand-written) and sendrecv_ops (internal ops) have none.
WRAPPER_FAMILIES = [
    "array_ops",
    "conv_ops",
    "data_flow_ops",
    "io_ops",
    "math_ops",
    "nn_ops",
    "parsing_ops",
    "random_ops",
    "state_ops",
    "string_ops",
    "training_ops",
]

def tg_op_wrappers(family):
    """Writes ops/<family>.h and ops/<family>.cc in the calling package.

    A small binary (:<family>_gen) links //ops:<family> and the generator
    (client/ops/gen/), walks the op registry and writes one class per op;
    no kernel is compiled for it. Put the two files in a cc_library.
    """
    native.cc_binary(
        name = family + "_gen",
        deps = [
            "//client/ops/gen:gen_main",
            "//ops:" + family,
        ],
    )
    native.genrule(
        name = family + "_wrappers",
        outs = [
            "ops/%s.h" % family,
            "ops/%s.cc" % family,
        ],
        cmd = "$(location :%s_gen) %s $(OUTS)" % (family, family),
        tools = [":%s_gen" % family],
    )
