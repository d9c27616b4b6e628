/* The MPI_Allreduce peer of bench/allreduce_benchmark, compiled and run by
 * bench/allreduce_peer.py (mpicc, then mpirun over TCP on loopback):
 *
 *   allreduce_mpi BYTES... WARMUP:K...   (one WARMUP:K per size, same order)
 *
 * For each size: a float32 buffer of BYTES, WARMUP untimed MPI_Allreduce
 * (MPI_SUM, in place), then K timed back to back on every rank; an
 * iteration's time is the slowest rank's (MPI_Reduce with MPI_MAX) and rank 0
 * prints the median in allreduce_peer.py's line format. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int CompareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int sizes = (argc - 1) / 2;
  for (int s = 0; s < sizes; ++s) {
    const long bytes = atol(argv[1 + s]);
    int warm_up = 0, k = 0;
    if (sscanf(argv[1 + sizes + s], "%d:%d", &warm_up, &k) != 2 || k <= 0 || bytes < 4) {
      if (rank == 0) fprintf(stderr, "allreduce_mpi: bad arguments\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int count = (int)(bytes / 4);
    float* x = malloc(bytes);
    double* times = malloc(k * sizeof(double));
    double* slowest = malloc(k * sizeof(double));
    for (int i = 0; i < count; ++i) x[i] = 1.0f;
    for (int i = 0; i < warm_up; ++i) {
      MPI_Allreduce(MPI_IN_PLACE, x, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    for (int i = 0; i < k; ++i) {
      const double start = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, x, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      times[i] = MPI_Wtime() - start;
    }
    MPI_Reduce(times, slowest, k, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      qsort(slowest, k, sizeof(double), CompareDoubles);
      const double median = k % 2 ? slowest[k / 2] : (slowest[k / 2 - 1] + slowest[k / 2]) / 2;
      const double algbw = bytes / median / 1e9;
      printf(
          "allreduce impl=mpi n=%d bytes=%ld iterations=%d median_us=%.1f algbw_GBps=%.4f "
          "busbw_GBps=%.4f\n",
          n, bytes, k, median * 1e6, algbw, algbw * 2 * (n - 1) / n);
      fflush(stdout);
    }
    free(x);
    free(times);
    free(slowest);
  }
  MPI_Finalize();
  return 0;
}
