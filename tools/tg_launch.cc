// tg_launch: starts a whole cluster of tg_server processes on this machine,
// waits until every task serves, and tears them all down at the end.
//
//   tg_launch --ps=1 --workers=2              # free loopback ports; Ctrl-C ends it
//   tg_launch --cluster="ps=localhost:2222;worker=localhost:2223"
//   tg_launch --tf_config_file=cluster.json   # {"cluster": {"worker": [...], ...}}
//   tg_launch --ps=1 --workers=2 -- sh -c 'echo "$TG_CLUSTER"'
//
// Each task's output lines come back prefixed with its name ("[ps:0] ...").
// Once every task printed its ready line, tg_launch prints "cluster: SPEC",
// one "target TASK grpc://HOST:PORT" and one "pid TASK PID" line per task.
// Without a command it then runs until SIGINT/SIGTERM and exits 0; with one
// it runs COMMAND (TG_CLUSTER and TF_CONFIG set) and exits with its status.
// A task that exits early is named and fails the launch (exit status 1).
// See docs/tg_launch.md.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/platform/file.h"
#include "core/platform/free_port.h"
#include "core/platform/status.h"
#include "core/util/proto_text.h"
#include "distributed/cluster_spec.h"
#include "tools/flags.h"

extern char** environ;

namespace tensorgrid {
namespace tg_launch {
namespace {

using Clock = std::chrono::steady_clock;

// How long tasks get to stop after SIGTERM before they are killed.
constexpr std::chrono::seconds kStopGrace(10);

struct Options {
  int ps = 0;
  int workers = 0;
  bool chief = false;
  std::string cluster;
  std::string tf_config_file;
  std::string server_binary;
  std::string server_config;  // tg_server's --config, for every task
  // Tasks are this program, not tg_server: they get the words after "--" as
  // extra arguments, and the launch ends when they all have.
  std::string task_binary;
  int startup_timeout_s = 30;
  std::vector<std::string> command;  // after "--": the command, or the tasks' arguments
  bool help = false;

  // The cluster comes from --ps/--workers/--chief: we pick its ports, so a
  // port someone else took first is worth a retry on other ones.
  bool picks_ports() const { return cluster.empty() && tf_config_file.empty(); }
};

const std::vector<tools::Flag>& Table() {
  static const auto* table = new std::vector<tools::Flag>{
      {"ps", "N", false, "number of ps tasks on free loopback ports (default 0)"},
      {"workers", "M", false, "number of worker tasks on free loopback ports"},
      {"chief", "", false, "also start one chief task (with --workers)"},
      {"cluster", "SPEC", false,
       "the cluster instead: \"ps=localhost:2222;worker=localhost:2223\";\n"
       "every task of it is started here"},
      {"tf_config_file", "FILE", false,
       "the cluster instead, from the \"cluster\" of a TF_CONFIG-style\n"
       "JSON file; its \"task\", if any, is ignored"},
      {"server_binary", "PATH", false,
       "the tg_server to run; default: tg_server next to tg_launch"},
      {"server_config", "TEXT", false,
       "every tg_server's --config, a ConfigProto in text format: e.g.\n"
       "'intra_op_parallelism_threads: 1', so that the tasks share this\n"
       "machine's cores instead of each taking them all"},
      {"task_binary", "PATH", false,
       "run PATH as every task instead of tg_server, with --cluster,\n"
       "--job_name, --task_index and the words after \"--\" (and its own\n"
       "TF_CONFIG and TG_CLUSTER in its environment); it must print\n"
       "the ready line once it serves and exit by itself: the launch ends\n"
       "0 when every task exited 0 (a training program's ps and workers)"},
      {"startup_timeout", "SECONDS", false,
       "how long every task gets to print its ready line (default 30)"},
  };
  return *table;
}

std::string Usage() {
  return absl::StrCat(
      "usage: tg_launch --ps=N --workers=M [--chief] [-- COMMAND ARGS...]\n"
      "       tg_launch --cluster=SPEC [-- COMMAND ARGS...]\n"
      "       tg_launch --tf_config_file=FILE [-- COMMAND ARGS...]\n"
      "\n"
      "Starts one tg_server per task, waits until all serve, then prints the\n"
      "cluster and the grpc:// target of every task. Without COMMAND it runs\n"
      "until SIGINT/SIGTERM; with one it runs COMMAND with TG_CLUSTER and\n"
      "TF_CONFIG set and exits with its status. Every task is stopped at the end.\n"
      "\n",
      tools::FlagsHelp(Table()));
}

absl::Status ParseCount(const tools::FlagValue& f, int min, int* out) {
  if (!absl::SimpleAtoi(f.value, out) || *out < min) {
    return errors::InvalidArgument("--", f.name, "='", f.value, "' is not a number >= ", min);
  }
  return absl::OkStatus();
}

absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& argv) {
  Options options;
  std::vector<std::string> args = argv;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      options.command.assign(args.begin() + i + 1, args.end());
      args.resize(i);
      break;
    }
  }
  TG_ASSIGN_OR_RETURN(options.help, tools::ParseArgs(Table(), args, [&](const tools::FlagValue& f) {
                        if (f.name == "ps") return ParseCount(f, 0, &options.ps);
                        if (f.name == "workers") return ParseCount(f, 1, &options.workers);
                        if (f.name == "startup_timeout")
                          return ParseCount(f, 1, &options.startup_timeout_s);
                        if (f.name == "chief") options.chief = f.value == "true";
                        if (f.name == "cluster") options.cluster = f.value;
                        if (f.name == "tf_config_file") options.tf_config_file = f.value;
                        if (f.name == "server_binary") options.server_binary = f.value;
                        if (f.name == "server_config") options.server_config = f.value;
                        if (f.name == "task_binary") options.task_binary = f.value;
                        return absl::OkStatus();
                      }));
  if (options.help) return options;
  const bool counts = options.ps > 0 || options.workers > 0 || options.chief;
  const int sources = (counts ? 1 : 0) + (options.cluster.empty() ? 0 : 1) +
                      (options.tf_config_file.empty() ? 0 : 1);
  if (sources != 1) {
    return errors::InvalidArgument(
        "give exactly one of --ps/--workers/--chief, --cluster and --tf_config_file");
  }
  if (counts && options.workers == 0) return errors::InvalidArgument("--workers must be >= 1");
  if (!options.task_binary.empty() && !options.server_binary.empty()) {
    return errors::InvalidArgument("give --task_binary or --server_binary, not both");
  }
  if (!options.task_binary.empty() && !options.server_config.empty()) {
    return errors::InvalidArgument(
        "--server_config is tg_server's --config; a --task_binary takes its own flags after --");
  }
  return options;
}

// Reserves `n` free loopback ports (ReserveFreePorts: below the kernel's
// ephemeral range, so no other task's bulk port takes one first). The
// sockets stay open (so the ports stay distinct) until the tasks start.
absl::StatusOr<std::vector<int>> ReservePorts(int n, std::vector<int>* sockets) {
  std::vector<int> ports = ReserveFreePorts(n, sockets);
  if (static_cast<int>(ports.size()) != n) {
    return errors::Unavailable("cannot reserve ", n, " free loopback ports");
  }
  return ports;
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stdout gone (SIGPIPE is ignored): drop the output
    done += n;
  }
}

void Say(const std::string& line) {
  WriteAll(STDERR_FILENO, absl::StrCat("tg_launch: ", line, "\n"));
}

// The cluster in a TF_CONFIG-style JSON file, {"cluster": {...}}; its
// "task", if any, means nothing here (every task is started) and is ignored
// with a note.
absl::StatusOr<ClusterSpec> ClusterFromTfConfigFile(const std::string& path) {
  TG_ASSIGN_OR_RETURN(std::string json, ReadFileToString(path, "TF_CONFIG file"));
  // Port 0 passes here so that ClusterWithFixedPorts can say why it fails.
  ClusterSpecOptions options;
  options.allow_port_zero = true;
  bool has_task = false;
  TG_ASSIGN_OR_RETURN(ClusterSpec cluster, TfConfig::ClusterOf(json, options, &has_task));
  if (has_task) {
    Say(absl::StrCat("ignoring the \"task\" of ", path, ": every task of its cluster is started"));
  }
  return cluster;
}

// `cluster`, unless a task has port 0: every task has to know every other
// task's port before it starts, so none can pick its own.
absl::StatusOr<ClusterSpec> ClusterWithFixedPorts(ClusterSpec cluster) {
  for (const ClusterSpec::Task& task : cluster.AllTasks()) {
    int port = -1;
    if (absl::SimpleAtoi(task.address.substr(task.address.rfind(':') + 1), &port) && port == 0) {
      return errors::InvalidArgument(task.name, " has port 0 (", task.address,
                                     "); give every task a fixed port, or use --ps/--workers "
                                     "for free ones");
    }
  }
  return cluster;
}

absl::StatusOr<ClusterSpec> BuildCluster(const Options& options, std::vector<int>* sockets) {
  if (!options.cluster.empty() || !options.tf_config_file.empty()) {
    ClusterSpecOptions spec_options;
    spec_options.allow_port_zero = true;  // ClusterWithFixedPorts explains the rule
    absl::StatusOr<ClusterSpec> spec = !options.cluster.empty()
                                           ? ClusterSpec::FromFlag(options.cluster, spec_options)
                                           : ClusterFromTfConfigFile(options.tf_config_file);
    if (spec.ok()) spec = ClusterWithFixedPorts(*std::move(spec));
    if (!spec.ok()) {
      return WithContext(spec.status(), !options.cluster.empty()
                                            ? "--cluster"
                                            : "--tf_config_file=" + options.tf_config_file);
    }
    return spec;
  }
  const int chief = options.chief ? 1 : 0;
  TG_ASSIGN_OR_RETURN(std::vector<int> ports,
                      ReservePorts(chief + options.ps + options.workers, sockets));
  ClusterSpec::JobMap jobs;
  size_t next = 0;
  auto add = [&](const std::string& job, int n) {
    for (int i = 0; i < n; ++i) jobs[job].push_back(absl::StrCat("localhost:", ports[next++]));
  };
  add("chief", chief);
  add("ps", options.ps);
  add("worker", options.workers);
  return ClusterSpec::FromMap(jobs);
}

// tg_server next to this executable.
std::string DefaultServerBinary() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "tg_server";
  std::string self(path, n);
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "tg_server" : self.substr(0, slash + 1) + "tg_server";
}

// "exited with status 1", "was killed by signal 9 (Killed)".
std::string DescribeStatus(int status) {
  if (WIFSIGNALED(status)) {
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("exited with status ", WEXITSTATUS(status));
}

// One child process: a task's tg_server (its stdout and stderr come through
// pipes and are forwarded line by line with a prefix) or the user's command
// (which writes to our stdout and stderr directly).
struct Child {
  std::string task;    // "/job:ps/replica:0/task:0"; empty for the command
  std::string prefix;  // "[ps:0] "
  pid_t pid = -1;
  int fds[2] = {-1, -1};  // read ends of its stdout and stderr pipes
  std::string partial[2];
  std::string address;  // from the ready line
  bool exited = false;
  int status = 0;
};

// The children and the loop that forwards their output, reaps them and
// notices SIGINT/SIGTERM. Single-threaded; signals arrive through a signalfd.
class Supervisor {
 public:
  explicit Supervisor(int signal_fd) : signal_fd_(signal_fd) {}

  // Starts `argv` with `env`; with `task` set, its output goes through pipes.
  absl::StatusOr<Child*> Spawn(const std::string& task, const std::string& prefix,
                               const std::vector<std::string>& argv,
                               const std::vector<std::string>& env);
  // Waits up to `timeout` for output, exits or signals, and handles them.
  void Poll(Clock::duration timeout);
  // SIGTERM to every live child, up to kStopGrace for them to exit, then SIGKILL.
  void StopAll();

  const std::vector<std::unique_ptr<Child>>& children() const { return children_; }
  int received_signal() const { return signal_; }
  // Each child that exited since the last call, once.
  std::vector<Child*> TakeExited() {
    std::vector<Child*> exited;
    exited.swap(exited_);
    return exited;
  }
  // Hands children back to the next TakeExited, ahead of later exits.
  void ReturnExited(std::vector<Child*> children) {
    children.insert(children.end(), exited_.begin(), exited_.end());
    exited_ = std::move(children);
  }
  // Children not exited yet.
  int running() const {
    int n = 0;
    for (const auto& child : children_) n += child->exited ? 0 : 1;
    return n;
  }

 private:
  void ReadFrom(Child& child, int stream, bool drain);
  void Reap();

  const int signal_fd_;
  std::vector<std::unique_ptr<Child>> children_;
  std::vector<Child*> exited_;
  int signal_ = 0;
};

absl::StatusOr<Child*> Supervisor::Spawn(const std::string& task, const std::string& prefix,
                                         const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env) {
  auto child = std::make_unique<Child>();
  child->task = task;
  child->prefix = prefix;
  int pipes[2][2] = {{-1, -1}, {-1, -1}};
  if (!task.empty() && (pipe2(pipes[0], O_CLOEXEC) != 0 || pipe2(pipes[1], O_CLOEXEC) != 0)) {
    return errors::Internal("pipe: ", strerror(errno));
  }
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> cargv, cenv;
  for (const std::string& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  for (const std::string& s : env) cenv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  cenv.push_back(nullptr);
  const std::string exec_failed = absl::StrCat("tg_launch: cannot run ", argv[0], ": ");
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return errors::Internal("fork: ", strerror(errno));
  if (pid == 0) {
    if (!task.empty()) {
      dup2(pipes[0][1], STDOUT_FILENO);
      dup2(pipes[1][1], STDERR_FILENO);
      // Its own process group: a terminal's Ctrl-C reaches only us, and we
      // stop the tasks. If we die without stopping them, they get SIGTERM.
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(1);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    execvpe(cargv[0], cargv.data(), cenv.data());
    const char* reason = strerror(errno);
    (void)!write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    (void)!write(STDERR_FILENO, reason, strlen(reason));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
  }
  child->pid = pid;
  for (int stream = 0; stream < 2 && !task.empty(); ++stream) {
    close(pipes[stream][1]);
    child->fds[stream] = pipes[stream][0];
  }
  children_.push_back(std::move(child));
  return children_.back().get();
}

// Reads what is available from one of a child's pipes (with `drain`, up to
// EOF) and forwards each complete line; the ready line also sets `address`.
void Supervisor::ReadFrom(Child& child, int stream, bool drain) {
  int& fd = child.fds[stream];
  char buffer[4096];
  do {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    std::string& partial = child.partial[stream];
    if (n <= 0) {
      if (!partial.empty()) partial += '\n';
      close(fd);
      fd = -1;
    } else {
      partial.append(buffer, n);
    }
    size_t newline;
    while ((newline = partial.find('\n')) != std::string::npos) {
      const std::string line = partial.substr(0, newline);
      partial.erase(0, newline + 1);
      const std::string ready = absl::StrCat("tg_server ready ", child.task, " ");
      if (stream == 0 && absl::StartsWith(line, ready)) child.address = line.substr(ready.size());
      WriteAll(stream == 0 ? STDOUT_FILENO : STDERR_FILENO, child.prefix + line + "\n");
    }
  } while (drain && fd >= 0);
}

void Supervisor::Reap() {
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (auto& child : children_) {
      if (child->pid != pid) continue;
      // The pipes hold everything it wrote; forward it before it is reported.
      for (int stream = 0; stream < 2; ++stream) {
        if (child->fds[stream] >= 0) ReadFrom(*child, stream, /*drain=*/true);
      }
      child->exited = true;
      child->status = status;
      exited_.push_back(child.get());
    }
  }
}

void Supervisor::Poll(Clock::duration timeout) {
  std::vector<pollfd> fds = {{signal_fd_, POLLIN, 0}};
  std::vector<std::pair<Child*, int>> sources = {{nullptr, 0}};
  for (auto& child : children_) {
    for (int stream = 0; stream < 2; ++stream) {
      if (child->fds[stream] < 0) continue;
      fds.push_back({child->fds[stream], POLLIN, 0});
      sources.push_back({child.get(), stream});
    }
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  if (poll(fds.data(), fds.size(), ms < 0 ? 0 : static_cast<int>(ms)) <= 0) return;
  for (size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents != 0) ReadFrom(*sources[i].first, sources[i].second, /*drain=*/false);
  }
  if (fds[0].revents != 0) {
    signalfd_siginfo info;
    while (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
      if (info.ssi_signo == SIGINT || info.ssi_signo == SIGTERM) signal_ = info.ssi_signo;
    }
    Reap();
  }
}

void Supervisor::StopAll() {
  auto live = [this] {
    int n = 0;
    for (auto& child : children_) n += child->exited ? 0 : 1;
    return n;
  };
  for (auto& child : children_) {
    if (!child->exited) kill(child->pid, SIGTERM);
  }
  const Clock::time_point deadline = Clock::now() + kStopGrace;
  while (live() > 0 && Clock::now() < deadline) Poll(deadline - Clock::now());
  for (auto& child : children_) {
    if (child->exited) continue;
    Say(absl::StrCat(child->task.empty() ? "command" : child->task, " did not stop in ",
                     kStopGrace.count(), " s; killing it"));
    kill(child->pid, SIGKILL);
  }
  while (live() > 0) Poll(std::chrono::milliseconds(100));
}

// Ours plus TG_CLUSTER and TF_CONFIG, whose task is `task`: the environment
// of a --task_binary task, and of the command as worker 0's client (task 0
// of the first job, if there is no worker job).
std::vector<std::string> EnvironmentOf(const ClusterSpec& cluster, const TaskId& task) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!absl::StartsWith(*e, "TG_CLUSTER=") && !absl::StartsWith(*e, "TF_CONFIG=")) {
      env.push_back(*e);
    }
  }
  TfConfig config;
  config.cluster = cluster;
  config.task = task;
  env.push_back("TG_CLUSTER=" + cluster.ToString());
  env.push_back("TF_CONFIG=" + config.ToJson());
  return env;
}

// Starts every task and waits for their ready lines. Returns the exit status
// to end with when the launch cannot go on (a task died, the time ran out, a
// signal), -1 when every task serves.
int StartTasks(Supervisor& supervisor, const ClusterSpec& cluster, const Options& options,
               std::vector<int>& reserved, bool* task_exited) {
  *task_exited = false;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  // Free the reserved ports just before the servers bind them.
  for (int fd : reserved) close(fd);
  reserved.clear();
  for (const auto& [job, addresses] : cluster.job_map()) {
    for (size_t i = 0; i < addresses.size(); ++i) {
      const bool tasks = !options.task_binary.empty();
      std::vector<std::string> argv = {tasks ? options.task_binary : options.server_binary,
                                       "--cluster=" + cluster.ToString(), "--job_name=" + job,
                                       absl::StrCat("--task_index=", i)};
      if (tasks) argv.insert(argv.end(), options.command.begin(), options.command.end());
      if (!tasks && !options.server_config.empty()) {
        argv.push_back("--config=" + options.server_config);
      }
      // A task program may read TF_CONFIG, as TensorFlow's do, instead of
      // its flags: each gets its own.
      absl::StatusOr<Child*> child =
          supervisor.Spawn(TaskName(job, i), absl::StrCat("[", job, ":", i, "] "), argv,
                           tasks ? EnvironmentOf(cluster, TaskId{job, static_cast<int>(i)}) : env);
      if (!child.ok()) {
        Say(std::string(child.status().message()));
        return 1;
      }
    }
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(options.startup_timeout_s);
  while (true) {
    std::vector<std::string> waiting;
    for (const auto& child : supervisor.children()) {
      if (child->address.empty()) waiting.push_back(child->task);
    }
    // A task program that served and then ended well is done early, not
    // failed: Supervise reports it once every task serves.
    std::vector<Child*> done_early;
    for (Child* child : supervisor.TakeExited()) {
      if (!options.task_binary.empty() && !child->address.empty() && WIFEXITED(child->status) &&
          WEXITSTATUS(child->status) == 0) {
        done_early.push_back(child);
        continue;
      }
      Say(absl::StrCat("task ", child->task, " ", DescribeStatus(child->status)));
      *task_exited = true;
      return 1;
    }
    supervisor.ReturnExited(std::move(done_early));
    if (const int signal = supervisor.received_signal(); signal != 0) {
      Say(absl::StrCat(strsignal(signal), " while starting, stopping the cluster"));
      // Without a command that is how a launch ends; a command never ran.
      return options.command.empty() ? 0 : 128 + signal;
    }
    if (waiting.empty()) return -1;
    if (Clock::now() >= deadline) {
      Say(absl::StrCat("not ready after ", options.startup_timeout_s,
                       " s: ", absl::StrJoin(waiting, ", ")));
      return 1;
    }
    supervisor.Poll(deadline - Clock::now());
  }
}

void PrintTargets(const Supervisor& supervisor, const ClusterSpec& cluster) {
  std::string text = absl::StrCat("cluster: ", cluster.ToString(), "\n");
  for (const auto& child : supervisor.children()) {
    absl::StrAppend(&text, "target ", child->task, " grpc://", child->address, "\n");
  }
  for (const auto& child : supervisor.children()) {
    absl::StrAppend(&text, "pid ", child->task, " ", child->pid, "\n");
  }
  WriteAll(STDOUT_FILENO, text);
}

// Runs until a signal, a task's death or (with a command) the command's
// exit; returns the exit status.
int Supervise(Supervisor& supervisor, const ClusterSpec& cluster, const Options& options) {
  Child* command = nullptr;
  const bool tasks = !options.task_binary.empty();
  if (!tasks && !options.command.empty()) {
    absl::StatusOr<Child*> spawned = supervisor.Spawn(
        "", "", options.command,
        EnvironmentOf(cluster,
                      TaskId{cluster.HasJob("worker") ? "worker" : cluster.jobs().front(), 0}));
    if (!spawned.ok()) {
      Say(std::string(spawned.status().message()));
      return 1;
    }
    command = *spawned;
  }
  while (true) {
    bool all_finished = false;  // report every task that exited before returning
    for (Child* child : supervisor.TakeExited()) {
      if (child == command) {
        const int status = child->status;
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      }
      if (tasks && WIFEXITED(child->status) && WEXITSTATUS(child->status) == 0) {
        Say(absl::StrCat("task ", child->task, " finished"));
        all_finished = supervisor.running() == 0;
        continue;
      }
      Say(absl::StrCat("task ", child->task, " ", DescribeStatus(child->status)));
      return 1;
    }
    if (all_finished) return 0;
    if (supervisor.received_signal() != 0) {
      Say(absl::StrCat(strsignal(supervisor.received_signal()), ", stopping the cluster"));
      return command == nullptr ? 0 : 128 + supervisor.received_signal();
    }
    supervisor.Poll(std::chrono::seconds(1));
  }
}

int Main(const std::vector<std::string>& args) {
  absl::StatusOr<Options> options = ParseFlags(args);
  if (!options.ok())
    return tools::ReportUsageError("tg_launch", options.status().message(), Usage());
  if (options->help) {
    std::cout << Usage();
    return 0;
  }
  if (!options->task_binary.empty()) {
    if (access(options->task_binary.c_str(), X_OK) != 0) {
      return tools::ReportError(
          errors::NotFound("--task_binary: no program at ", options->task_binary));
    }
  } else if (options->server_binary.empty()) {
    options->server_binary = DefaultServerBinary();
  }
  if (options->task_binary.empty() && access(options->server_binary.c_str(), X_OK) != 0) {
    return tools::ReportError(errors::NotFound("no tg_server at ", options->server_binary,
                                               " (give --server_binary=PATH)"));
  }
  // Signals are taken from a signalfd in the poll loop; children unblock them.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGCHLD);
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) return tools::ReportError(errors::Internal("signalfd: ", strerror(errno)));

  // Ports we picked ourselves are free when picked but may be taken by
  // someone else before a server binds them; a task that dies while
  // starting then gets a second (and third) try on other ports.
  constexpr int kAttempts = 3;
  int status = 1;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    std::vector<int> reserved;
    absl::StatusOr<ClusterSpec> cluster = BuildCluster(*options, &reserved);
    if (!cluster.ok()) {
      status = tools::ReportError(cluster.status());
      break;
    }
    Supervisor supervisor(signal_fd);
    bool task_exited = false;
    status = StartTasks(supervisor, *cluster, *options, reserved, &task_exited);
    if (status > 0 && task_exited && options->picks_ports() && attempt < kAttempts) {
      supervisor.StopAll();
      Say("retrying on other free ports");
      continue;
    }
    if (status < 0) {
      PrintTargets(supervisor, *cluster);
      status = Supervise(supervisor, *cluster, *options);
    }
    supervisor.StopAll();
    break;
  }
  close(signal_fd);
  return status;
}

}  // namespace
}  // namespace tg_launch
}  // namespace tensorgrid

int main(int argc, char** argv) {
  return tensorgrid::tg_launch::Main(std::vector<std::string>(argv + 1, argv + argc));
}
