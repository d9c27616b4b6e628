// tg_server: runs one task of a cluster (its WorkerService and MasterService)
// until SIGTERM or SIGINT.
//
//   tg_server --cluster="ps=localhost:2222;worker=localhost:2223,localhost:2224"
//             --job_name=worker --task_index=0
//   TF_CONFIG='{"cluster": {...}, "task": {"type": "ps", "index": 0}}' tg_server
//   srun -n 5 tg_server --slurm_jobs=ps:1,worker:4 --bind=0.0.0.0
//   mpirun -np 3 tg_server --cluster="ps=h1:2222;worker=h1:2223,h2:2222" --bind=0.0.0.0
//
// The cluster comes from a ClusterResolver (--cluster_resolver, default
// auto; distributed/cluster_resolver.h), whose answer it prints on stderr.
// Prints one line, "tg_server ready /job:worker/replica:0/task:0 127.0.0.1:2223",
// to stdout once it serves; a signal stops it gracefully and it exits 0.
// See docs/server.md.
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "distributed/cluster_resolver.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"
#include "tools/flags.h"

namespace tensorgrid {
namespace tg_server {
namespace {

struct Options {
  ClusterResolverOptions resolver;
  std::string bind_host;
  int64_t startup_timeout_seconds = 60;
  // Empty: the TG_* environment variable of the same meaning, if set.
  std::string auth_token_file, tls_ca_file, tls_cert_file, tls_key_file;
  int max_request_bytes = 1 << 30;
  int64_t request_timeout_seconds = 60;
  int64_t session_gc_seconds = 0;
  int max_sessions = 1024;
  std::string bulk_transfer;  // "true"/"false"; empty: $TG_BULK_TRANSFER, else true
  int bulk_port_offset = -1;  // -1: $TG_BULK_PORT_OFFSET, else 0 (the kernel picks)
  ConfigProto config;         // the task's devices and their threads
  bool help = false;
};

const std::vector<tools::Flag>& Table() {
  static const auto* table = new std::vector<tools::Flag>{
      {"cluster_resolver", "NAME", false,
       "where the cluster comes from: flags, tf_config, slurm, mpi, or\n"
       "auto (default: the first of them present; docs/multi_host.md)"},
      {"cluster", "SPEC", false,
       "the cluster, \"ps=host:port;worker=host:port,host:port\";\n"
       "under mpirun, or a list host:port,... in rank order"},
      {"ps_hosts", "H:P,...", false, "or TensorFlow's flags: the ps tasks"},
      {"worker_hosts", "H:P,...", false, "and the worker tasks"},
      {"job_name", "JOB", false, "this task's job (with --cluster or the hosts flags)"},
      {"task_index", "N", false, "this task's index in its job (default 0)"},
      {"slurm_jobs", "JOB:N,...", false,
       "srun's tasks in rank order, e.g. ps:1,worker:4 (default: all workers)"},
      {"mpi_jobs", "JOB:N,...", false, "mpirun's ranks in order, as --slurm_jobs"},
      {"hostfile", "FILE", false,
       "mpi: OpenMPI's hostfile (\"host slots=N\"), ranks filling slots in turn"},
      {"port_base", "PORT", false,
       "slurm, mpi --hostfile: a node's k-th task listens on PORT+k (default 2222)"},
      {"gpus_per_task", "N", false,
       "slurm: CUDA_VISIBLE_DEVICES=LOCALID*N..+N-1, unless already set"},
      {"bind", "HOST", false,
       "host to listen on, both ports; default: the host of this task's\n"
       "address (localhost: 127.0.0.1 only); 0.0.0.0 or [::] for every\n"
       "interface. Peers know the task by its cluster address either way"},
      {"startup_timeout_seconds", "N", false,
       "how long to wait for this task's own host name to resolve (a\n"
       "Kubernetes pod's, say) before failing (default 60)"},
      {"auth_token_file", "FILE", false,
       "require this shared token on every call, and send it to the\n"
       "other tasks (default: $TG_AUTH_TOKEN_FILE)"},
      {"tls_cert_file", "FILE", false,
       "serve TLS with this PEM certificate (default: $TG_TLS_CERT_FILE)"},
      {"tls_key_file", "FILE", false, "its PEM private key (default: $TG_TLS_KEY_FILE)"},
      {"tls_ca_file", "FILE", false,
       "PEM roots that verify the other tasks' certificates; clients\n"
       "must then present one too: mutual TLS (default: $TG_TLS_CA_FILE)"},
      {"max_request_bytes", "N", false,
       "refuse larger requests with ResourceExhausted (default 1 GiB)"},
      {"request_timeout_seconds", "N", false,
       "a request must arrive whole within N seconds of its call's\n"
       "start, or is DeadlineExceeded (default 60; 0: the client's deadline)"},
      {"session_gc_seconds", "N", false,
       "close a client session with no call for N seconds (default 0:\n"
       "never, as TensorFlow); its next call is NotFound saying why"},
      {"max_sessions", "N", false,
       "the most client sessions open at once (default 1024); one more\n"
       "closes the least recently used idle one"},
      {"bulk_transfer", "", false,
       "serve large tensors, RunGraph and collective chunks to the other\n"
       "tasks on a second, plain TCP port the kernel picks (default:\n"
       "$TG_BULK_TRANSFER, else true; never with TLS)"},
      {"bulk_port_offset", "N", false,
       "the bulk port at the gRPC port + N, for firewalls (2222 + 1000:\n"
       "3222; default $TG_BULK_PORT_OFFSET, else a port the kernel picks)"},
      {"config", "TEXT", false,
       "a ConfigProto in text format for this task's devices, as\n"
       "tf.distribute.Server's config: 'intra_op_parallelism_threads: 4'\n"
       "(threads per kernel; default one per core), 'gpu_options {...}'"},
  };
  return *table;
}

std::string Usage() {
  return absl::StrCat(
      "usage: tg_server --cluster=SPEC --job_name=JOB [--task_index=N] [--bind=HOST]\n"
      "       srun tg_server [--slurm_jobs=ps:1,worker:4] [--port_base=PORT] [--bind=HOST]\n"
      "       mpirun tg_server --cluster=SPEC|--hostfile=FILE [--mpi_jobs=JOB:N,...] "
      "[--bind=HOST]\n"
      "                 [--auth_token_file=FILE] [--tls_cert_file=FILE --tls_key_file=FILE]\n"
      "                 [--tls_ca_file=FILE] [--max_request_bytes=N] [--bulk_transfer=false]\n"
      "                 [--bulk_port_offset=N]\n"
      "                 [--request_timeout_seconds=N] [--session_gc_seconds=N] [--max_sessions=N]\n"
      "                 [--config=TEXT]\n"
      "       TF_CONFIG='{\"cluster\": {...}, \"task\": {\"type\": JOB, \"index\": N}}' tg_server\n"
      "\n"
      "Serves one task of a cluster until SIGTERM or SIGINT, then stops gracefully\n"
      "and exits 0. Prints \"tg_server ready TASK HOST:PORT\" once serving; a port of\n"
      "0 picks a free one.\n"
      "\n",
      tools::FlagsHelp(Table()));
}

absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& args) {
  Options options;
  TG_ASSIGN_OR_RETURN(
      options.help, tools::ParseArgs(Table(), args, [&](const tools::FlagValue& f) {
        ClusterResolverOptions& r = options.resolver;
        if (f.name == "cluster_resolver") r.resolver = f.value;
        if (f.name == "cluster") r.cluster = f.value;
        if (f.name == "ps_hosts") r.ps_hosts = f.value;
        if (f.name == "worker_hosts") r.worker_hosts = f.value;
        if (f.name == "job_name") r.job_name = f.value;
        if (f.name == "slurm_jobs") r.slurm_jobs = f.value;
        if (f.name == "mpi_jobs") r.mpi_jobs = f.value;
        if (f.name == "hostfile") r.hostfile = f.value;
        // --NAME=N for an integer N in [lo, hi], else InvalidArgument
        // "--NAME='value' is not WHAT".
        auto integer = [&f](const char* name, auto* out, int64_t lo, int64_t hi,
                            const char* what) -> absl::Status {
          if (f.name != name) return absl::OkStatus();
          if (!absl::SimpleAtoi(f.value, out) || *out < lo || *out > hi) {
            return errors::InvalidArgument("--", name, "='", f.value, "' is not ", what);
          }
          return absl::OkStatus();
        };
        constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
        TG_RETURN_IF_ERROR(integer("port_base", &r.port_base, 1, 65535, "a port in 1..65535"));
        TG_RETURN_IF_ERROR(integer("gpus_per_task", &r.gpus_per_task, 0, kMax, "a number of GPUs"));
        TG_RETURN_IF_ERROR(integer("startup_timeout_seconds", &options.startup_timeout_seconds, 0,
                                   kMax, "a number of seconds"));
        if (f.name == "bind") options.bind_host = f.value;
        if (f.name == "auth_token_file") options.auth_token_file = f.value;
        if (f.name == "tls_ca_file") options.tls_ca_file = f.value;
        if (f.name == "tls_cert_file") options.tls_cert_file = f.value;
        if (f.name == "tls_key_file") options.tls_key_file = f.value;
        if (f.name == "bulk_transfer") options.bulk_transfer = f.value;
        if (f.name == "config") TG_RETURN_IF_ERROR(tools::ParseTextProtoFlag(f, &options.config));
        TG_RETURN_IF_ERROR(integer("bulk_port_offset", &options.bulk_port_offset, 0, 65535,
                                   "a port offset (0 to 65535)"));
        TG_RETURN_IF_ERROR(integer("max_request_bytes", &options.max_request_bytes, 1, kMax,
                                   "a positive number of bytes below 2 GiB"));
        TG_RETURN_IF_ERROR(integer("request_timeout_seconds", &options.request_timeout_seconds, 0,
                                   kMax, "a number of seconds"));
        TG_RETURN_IF_ERROR(integer("session_gc_seconds", &options.session_gc_seconds, 0, kMax,
                                   "a number of seconds"));
        TG_RETURN_IF_ERROR(
            integer("max_sessions", &options.max_sessions, 1, kMax, "a positive number"));
        TG_RETURN_IF_ERROR(integer("task_index", &r.task_index, 0, kMax, "an index"));
        return absl::OkStatus();
      }));
  if (options.help) return options;
  const ClusterResolverOptions& r = options.resolver;
  const bool cluster_flags = !r.cluster.empty() || !r.ps_hosts.empty() || !r.worker_hosts.empty();
  if (!cluster_flags && (!r.job_name.empty() || r.task_index >= 0)) {
    return errors::InvalidArgument(
        "--job_name and --task_index need --cluster or --ps_hosts/--worker_hosts");
  }
  // Under mpirun (auto or mpi), --cluster alone is the ranks' cluster.
  if (cluster_flags && r.job_name.empty() && r.resolver == "flags") {
    return errors::InvalidArgument("--cluster needs --job_name");
  }
  options.resolver.spec_options.allow_port_zero = true;
  return options;
}

// Serves until SIGTERM or SIGINT. The signals are blocked in every thread
// (the mask is set before gRPC starts any) and taken here with sigwait.
absl::Status Serve(const TfConfig& config, const Options& options, const sigset_t& signals) {
  ServerOptions server_options;
  server_options.bind_host = options.bind_host;
  server_options.resolve_timeout = absl::Seconds(options.startup_timeout_seconds);
  server_options.max_request_bytes = options.max_request_bytes;
  server_options.request_timeout = absl::Seconds(options.request_timeout_seconds);
  server_options.session_gc = absl::Seconds(options.session_gc_seconds);
  server_options.max_sessions = options.max_sessions;
  server_options.bulk_port_offset = options.bulk_port_offset;
  auto flag_or_env = [](const std::string& flag, const char* env) {
    const char* value = std::getenv(env);
    return !flag.empty() || value == nullptr ? flag : std::string(value);
  };
  const std::string bulk = flag_or_env(options.bulk_transfer, "TG_BULK_TRANSFER");
  if (bulk == "false" || bulk == "0") {
    server_options.bulk_transfer = false;
  } else if (!bulk.empty() && bulk != "true" && bulk != "1") {
    return errors::InvalidArgument("TG_BULK_TRANSFER='", bulk, "' is not true, false, 1 or 0");
  }
  TG_ASSIGN_OR_RETURN(
      server_options.security,
      RpcSecurity::FromFiles(flag_or_env(options.auth_token_file, "TG_AUTH_TOKEN_FILE"),
                             flag_or_env(options.tls_ca_file, "TG_TLS_CA_FILE"),
                             flag_or_env(options.tls_cert_file, "TG_TLS_CERT_FILE"),
                             flag_or_env(options.tls_key_file, "TG_TLS_KEY_FILE")));
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server,
                      Server::Create(config.cluster, config.task.job, config.task.index,
                                     options.config, server_options));
  TG_RETURN_IF_ERROR(server->Start());
  std::cout << "tg_server ready " << server->task() << " " << server->address() << std::endl;
  int signal = 0;
  sigwait(&signals, &signal);
  std::cerr << "tg_server: " << strsignal(signal) << ", stopping " << server->task() << std::endl;
  server->Stop();
  return absl::OkStatus();
}

int Main(const std::vector<std::string>& args) {
  // A shell starts background jobs with SIGINT ignored; we want it.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<Options> options = ParseFlags(args);
  if (!options.ok())
    return tools::ReportUsageError("tg_server", options.status().message(), Usage());
  if (options->help) {
    std::cout << Usage();
    return 0;
  }
  // Which resolver is a usage question; what it finds is a runtime one.
  absl::StatusOr<std::unique_ptr<ClusterResolver>> resolver =
      NewClusterResolver(options->resolver, Environment::Process());
  if (!resolver.ok()) {
    return tools::ReportUsageError("tg_server", resolver.status().message(), Usage());
  }
  if ((*resolver)->name() == "flags" && options->resolver.job_name.empty()) {
    return tools::ReportUsageError("tg_server", "--cluster needs --job_name", Usage());
  }
  absl::StatusOr<ResolvedTask> task = (*resolver)->Resolve();
  if (!task.ok()) {
    return tools::ReportError(
        WithContext(task.status(), absl::StrCat("cluster resolver ", (*resolver)->name())));
  }
  if (task->config.task.job == "evaluator" && !task->config.cluster.HasJob("evaluator")) {
    return tools::ReportError(errors::InvalidArgument(
        "the task is the evaluator, which runs beside the training cluster, not in it: as in "
        "TensorFlow, it serves nothing. Run the evaluation program itself with this TF_CONFIG, or "
        "list \"evaluator\" in the cluster to give it a server"));
  }
  std::cerr << "tg_server: " << task->ToString() << std::endl;
  const std::string gpus = task->ApplyCudaVisibleDevices();  // before any CUDA call
  if (!gpus.empty()) std::cerr << "tg_server: " << gpus << std::endl;
  return tools::ReportError(Serve(task->config, *options, signals));
}

}  // namespace
}  // namespace tg_server
}  // namespace tensorgrid

int main(int argc, char** argv) {
  return tensorgrid::tg_server::Main(std::vector<std::string>(argv + 1, argv + argc));
}
