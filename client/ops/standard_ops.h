// The common op wrappers: include this to build graphs with ops::*. The
// headers it gathers are generated from the op registry (docs/ops.md), but
// for const_op.h; training_ops.h, data_flow_ops.h, io_ops.h and
// collective_ops.h are included where needed.
#ifndef TENSORGRID_CLIENT_OPS_STANDARD_OPS_H_
#define TENSORGRID_CLIENT_OPS_STANDARD_OPS_H_

#include "client/ops/array_ops.h"   // IWYU pragma: export
#include "client/ops/const_op.h"    // IWYU pragma: export
#include "client/ops/conv_ops.h"    // IWYU pragma: export
#include "client/ops/math_ops.h"    // IWYU pragma: export
#include "client/ops/nn_ops.h"      // IWYU pragma: export
#include "client/ops/random_ops.h"  // IWYU pragma: export
#include "client/ops/state_ops.h"   // IWYU pragma: export
#include "client/output.h"          // IWYU pragma: export
#include "client/scope.h"           // IWYU pragma: export

#endif  // TENSORGRID_CLIENT_OPS_STANDARD_OPS_H_
