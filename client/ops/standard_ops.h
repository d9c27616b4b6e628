// Every op wrapper, as TensorFlow's cc/ops/standard_ops.h: include this to
// build graphs with ops::*. The headers it gathers are generated from the op
// registry (docs/ops.md), but for const_op.h; collective_ops.h (a library of
// its own) is included where needed.
#ifndef TENSORGRID_CLIENT_OPS_STANDARD_OPS_H_
#define TENSORGRID_CLIENT_OPS_STANDARD_OPS_H_

#include "client/ops/array_ops.h"   // IWYU pragma: export
#include "client/ops/const_op.h"    // IWYU pragma: export
#include "client/ops/conv_ops.h"    // IWYU pragma: export
#include "client/ops/data_flow_ops.h"  // IWYU pragma: export
#include "client/ops/io_ops.h"         // IWYU pragma: export
#include "client/ops/math_ops.h"    // IWYU pragma: export
#include "client/ops/nn_ops.h"      // IWYU pragma: export
#include "client/ops/parsing_ops.h"  // IWYU pragma: export
#include "client/ops/random_ops.h"  // IWYU pragma: export
#include "client/ops/state_ops.h"   // IWYU pragma: export
#include "client/ops/string_ops.h"  // IWYU pragma: export
#include "client/ops/training_ops.h"  // IWYU pragma: export
#include "client/output.h"          // IWYU pragma: export
#include "client/scope.h"           // IWYU pragma: export

#endif  // TENSORGRID_CLIENT_OPS_STANDARD_OPS_H_
