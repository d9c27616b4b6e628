// Servers in child processes for the benchmarks that measure across
// processes (distributed_step_benchmark, recv_tensor_benchmark).
//
//   Child c = Spawn("worker", [](int report_fd, const sigset_t& signals) {
//     ... start serving ...;  Report(report_fd, "ready " + address);
//     int sig; sigwait(&signals, &sig);   // until StopChildren
//   });
//   AwaitReady(c, std::chrono::steady_clock::now() + std::chrono::seconds(30));
//   ... c.address ...
//   StopChildren(children);
//
// Setup failures end the run (Die): there is nothing to measure without
// the peers. Messages are prefixed with the program's name.
#ifndef TENSORGRID_BENCH_CHILD_PROCESS_H_
#define TENSORGRID_BENCH_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tensorgrid {
namespace bench {

[[noreturn]] void Die(const std::string& message);
void CheckOk(const absl::Status& status, const std::string& what);

struct Child {
  std::string name;
  pid_t pid = -1;
  int ready_fd = -1;    // read end of the pipe the child reports on
  std::string address;  // what followed "ready " in its report
};

// Writes one line to the parent.
void Report(int fd, const std::string& line);

// Forks a child that runs `serve(report_fd, signals)`; `serve` reports
// "ready ADDRESS" or "error MESSAGE". SIGTERM/SIGINT are blocked in the
// child before any of its threads exist, so `serve` can sigwait on
// `signals`; the child dies with us (PR_SET_PDEATHSIG) and exits when
// `serve` returns, without running the parent's static destructors.
Child Spawn(const std::string& name,
            const std::function<void(int report_fd, const sigset_t& signals)>& serve);

// Waits until `deadline` for the child's "ready ADDRESS" line.
void AwaitReady(Child& child, std::chrono::steady_clock::time_point deadline);
// The child's next line (after "ready"), read by `deadline`; "error ..."
// ends the run.
std::string ReadLine(Child& child, std::chrono::steady_clock::time_point deadline);

// SIGTERM to each child, up to 10 s for all of them to exit, then SIGKILL.
void StopChildren(std::vector<Child>& children);

}  // namespace bench
}  // namespace tensorgrid

#endif  // TENSORGRID_BENCH_CHILD_PROCESS_H_
