// tg_server: runs one task of a cluster (its WorkerService and MasterService)
// until SIGTERM or SIGINT.
//
//   tg_server --cluster="ps=localhost:2222;worker=localhost:2223,localhost:2224"
//             --job_name=worker --task_index=0
//   TF_CONFIG='{"cluster": {...}, "task": {"type": "ps", "index": 0}}' tg_server
//
// Prints one line, "tg_server ready /job:worker/replica:0/task:0 127.0.0.1:2223",
// to stdout once it serves; a signal stops it gracefully and it exits 0.
// See docs/server.md.
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"
#include "tools/flags.h"

namespace tensorgrid {
namespace tg_server {
namespace {

struct Options {
  std::string cluster;
  std::string job_name;
  int task_index = -1;
  std::string bind_host;
  // Empty: the TG_* environment variable of the same meaning, if set.
  std::string auth_token_file, tls_ca_file, tls_cert_file, tls_key_file;
  int max_request_bytes = 1 << 30;
  int64_t request_timeout_seconds = 60;
  int64_t session_gc_seconds = 0;
  int max_sessions = 1024;
  std::string bulk_transfer;  // "true"/"false"; empty: $TG_BULK_TRANSFER, else true
  bool help = false;
};

const std::vector<tools::Flag>& Table() {
  static const auto* table = new std::vector<tools::Flag>{
      {"cluster", "SPEC", false,
       "the cluster, \"ps=host:port;worker=host:port,host:port\";\n"
       "without it, TF_CONFIG from the environment"},
      {"job_name", "JOB", false, "this task's job (with --cluster)"},
      {"task_index", "N", false, "this task's index in its job (with --cluster; default 0)"},
      {"bind", "HOST", false,
       "host to listen on; default: the host of this task's address\n"
       "(localhost: 127.0.0.1 only); 0.0.0.0 for every interface"},
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
  };
  return *table;
}

std::string Usage() {
  return absl::StrCat(
      "usage: tg_server --cluster=SPEC --job_name=JOB [--task_index=N] [--bind=HOST]\n"
      "                 [--auth_token_file=FILE] [--tls_cert_file=FILE --tls_key_file=FILE]\n"
      "                 [--tls_ca_file=FILE] [--max_request_bytes=N] [--bulk_transfer=false]\n"
      "                 [--request_timeout_seconds=N] [--session_gc_seconds=N] [--max_sessions=N]\n"
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
        if (f.name == "cluster") options.cluster = f.value;
        if (f.name == "job_name") options.job_name = f.value;
        if (f.name == "bind") options.bind_host = f.value;
        if (f.name == "auth_token_file") options.auth_token_file = f.value;
        if (f.name == "tls_ca_file") options.tls_ca_file = f.value;
        if (f.name == "tls_cert_file") options.tls_cert_file = f.value;
        if (f.name == "tls_key_file") options.tls_key_file = f.value;
        if (f.name == "bulk_transfer") options.bulk_transfer = f.value;
        if (f.name == "max_request_bytes" &&
            (!absl::SimpleAtoi(f.value, &options.max_request_bytes) ||
             options.max_request_bytes <= 0)) {
          return errors::InvalidArgument("--max_request_bytes='", f.value,
                                         "' is not a positive number of bytes below 2 GiB");
        }
        if (f.name == "request_timeout_seconds" &&
            (!absl::SimpleAtoi(f.value, &options.request_timeout_seconds) ||
             options.request_timeout_seconds < 0)) {
          return errors::InvalidArgument("--request_timeout_seconds='", f.value,
                                         "' is not a number of seconds");
        }
        if (f.name == "session_gc_seconds" &&
            (!absl::SimpleAtoi(f.value, &options.session_gc_seconds) ||
             options.session_gc_seconds < 0)) {
          return errors::InvalidArgument("--session_gc_seconds='", f.value,
                                         "' is not a number of seconds");
        }
        if (f.name == "max_sessions" &&
            (!absl::SimpleAtoi(f.value, &options.max_sessions) || options.max_sessions <= 0)) {
          return errors::InvalidArgument("--max_sessions='", f.value, "' is not a positive number");
        }
        if (f.name == "task_index" &&
            (!absl::SimpleAtoi(f.value, &options.task_index) || options.task_index < 0)) {
          return errors::InvalidArgument("--task_index='", f.value, "' is not an index");
        }
        return absl::OkStatus();
      }));
  if (options.help) return options;
  if (options.cluster.empty()) {
    if (!options.job_name.empty() || options.task_index >= 0) {
      return errors::InvalidArgument("--job_name and --task_index need --cluster");
    }
  } else if (options.job_name.empty()) {
    return errors::InvalidArgument("--cluster needs --job_name");
  }
  return options;
}

// The cluster and this task, from the flags or else TF_CONFIG.
absl::StatusOr<TfConfig> ResolveTask(const Options& options) {
  ClusterSpecOptions spec_options;
  spec_options.allow_port_zero = true;
  if (options.cluster.empty()) {
    absl::StatusOr<TfConfig> config = TfConfig::FromEnvironment(spec_options);
    if (!config.ok()) return WithContext(config.status(), "no --cluster, and TF_CONFIG");
    return config;
  }
  TfConfig config;
  TG_ASSIGN_OR_RETURN(config.cluster, ClusterSpec::FromFlag(options.cluster, spec_options));
  config.task.job = options.job_name;
  config.task.index = options.task_index < 0 ? 0 : options.task_index;
  return config;
}

// Serves until SIGTERM or SIGINT. The signals are blocked in every thread
// (the mask is set before gRPC starts any) and taken here with sigwait.
absl::Status Serve(const TfConfig& config, const Options& options, const sigset_t& signals) {
  ServerOptions server_options;
  server_options.bind_host = options.bind_host;
  server_options.max_request_bytes = options.max_request_bytes;
  server_options.request_timeout = absl::Seconds(options.request_timeout_seconds);
  server_options.session_gc = absl::Seconds(options.session_gc_seconds);
  server_options.max_sessions = options.max_sessions;
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
                                     ConfigProto(), server_options));
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
  if (options->cluster.empty() && std::getenv("TF_CONFIG") == nullptr) {
    return tools::ReportUsageError("tg_server", "give --cluster, or set TF_CONFIG", Usage());
  }
  absl::StatusOr<TfConfig> config = ResolveTask(*options);
  if (!config.ok()) return tools::ReportError(config.status());
  return tools::ReportError(Serve(*config, *options, signals));
}

}  // namespace
}  // namespace tg_server
}  // namespace tensorgrid

int main(int argc, char** argv) {
  return tensorgrid::tg_server::Main(std::vector<std::string>(argv + 1, argv + argc));
}
