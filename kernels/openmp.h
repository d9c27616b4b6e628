// The OpenMP runtime oneDNN runs on (Debian's libdnnl links GCC's libgomp):
// the two calls tensorgrid makes, whether or not the compiler ships omp.h
// (clang does only with libomp-dev). Link //kernels:openmp.
//
//   SetOpenMpThreads(ctx.eigen_cpu_device().numThreads());  // then call oneDNN
#ifndef TENSORGRID_KERNELS_OPENMP_H_
#define TENSORGRID_KERNELS_OPENMP_H_

#include <algorithm>

#if __has_include(<omp.h>)
#include <omp.h>
#else
extern "C" {
void omp_set_num_threads(int);
int omp_get_max_threads(void);
}
#endif

namespace tensorgrid {

// oneDNN sizes its OpenMP team by omp_get_max_threads(), a setting of the
// calling thread: this sets it (at least 1) for the calls that follow here.
inline void SetOpenMpThreads(int threads) { omp_set_num_threads(std::max(1, threads)); }

// The team size the calling thread's next parallel region gets.
inline int OpenMpThreads() { return omp_get_max_threads(); }

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_OPENMP_H_
