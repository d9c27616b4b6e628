#include "bench/child_process.h"

#include <errno.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tensorgrid {
namespace bench {

void Die(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, message.c_str());
  std::exit(1);
}

void CheckOk(const absl::Status& status, const std::string& what) {
  if (!status.ok()) Die(absl::StrCat(what, ": ", status.ToString()));
}

void Report(int fd, const std::string& line) {
  const std::string text = line + "\n";
  (void)!write(fd, text.data(), text.size());
}

Child Spawn(const std::string& name,
            const std::function<void(int report_fd, const sigset_t& signals)>& serve) {
  int fds[2];
  if (pipe(fds) != 0) Die(absl::StrCat("pipe: ", std::strerror(errno)));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) Die(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    close(fds[0]);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    serve(fds[1], signals);
    _exit(0);  // never run static destructors that belong to the parent
  }
  close(fds[1]);
  Child child;
  child.name = name;
  child.pid = pid;
  child.ready_fd = fds[0];
  return child;
}

std::string ReadLine(Child& child, std::chrono::steady_clock::time_point deadline) {
  std::string line;
  char c;
  while (line.empty() || line.back() != '\n') {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd fd = {child.ready_fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&fd, 1, static_cast<int>(left.count())) == 0) {
      Die(absl::StrCat(child.name, " said nothing in time"));
    }
    const ssize_t n = read(child.ready_fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die(absl::StrCat(child.name, " exited"));
    line += c;
  }
  line.pop_back();
  if (absl::StartsWith(line, "error ")) Die(absl::StrCat(child.name, ": ", line));
  return line;
}

void AwaitReady(Child& child, std::chrono::steady_clock::time_point deadline) {
  const std::string line = ReadLine(child, deadline);
  if (!absl::StartsWith(line, "ready ")) Die(absl::StrCat(child.name, ": ", line));
  child.address = line.substr(6);
}

void StopChildren(std::vector<Child>& children) {
  for (const Child& child : children) kill(child.pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (Child& child : children) {
    int status;
    while (waitpid(child.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "%s: %s did not stop in 10 s; killing it\n",
                     program_invocation_short_name, child.name.c_str());
        kill(child.pid, SIGKILL);
        waitpid(child.pid, &status, 0);
        break;
      }
      usleep(10000);
    }
    close(child.ready_fd);
  }
  children.clear();
}

}  // namespace bench
}  // namespace tensorgrid
