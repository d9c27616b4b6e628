// RpcSecurity: the token and TLS settings a task's server and its clients
// share, read from files or the TG_* environment variables.
//
//   TG_ASSIGN_OR_RETURN(server_options.security, RpcSecurity::FromEnvironment());
#ifndef TENSORGRID_DISTRIBUTED_RPC_SECURITY_H_
#define TENSORGRID_DISTRIBUTED_RPC_SECURITY_H_

#include <string>

#include "absl/status/statusor.h"

namespace tensorgrid {

// How a process proves itself on the wire, the same for its server and its
// client channels (a task is both):
//   - auth_token: a shared secret sent with every call ("authorization:
//     Bearer <token>" metadata) and, on a server, required on every call:
//     a call without it is Unauthenticated before any work is done.
//   - TLS from PEM texts: tls_cert + tls_key are this side's certificate (a
//     server's; a client's too for mutual TLS); tls_ca verifies the peer: a
//     client checks the server against it, and a server given one requires
//     and checks client certificates (mutual TLS). A client with only
//     tls_ca speaks TLS without a certificate of its own.
// Both are off when empty. Without TLS the token crosses the wire in clear
// text: it keeps stray clients out, not eavesdroppers.
struct RpcSecurity {
  std::string auth_token;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;

  bool tls() const { return !tls_ca.empty() || !tls_cert.empty(); }

  // Reads the files that are named (empty paths are skipped). The token is
  // the file's text less surrounding whitespace. InvalidArgument naming the
  // file if it cannot be read or the token is empty; a certificate without
  // its key (or the reverse) is InvalidArgument too.
  static absl::StatusOr<RpcSecurity> FromFiles(const std::string& auth_token_file,
                                               const std::string& tls_ca_file,
                                               const std::string& tls_cert_file,
                                               const std::string& tls_key_file);
  // FromFiles with the paths in TG_AUTH_TOKEN_FILE, TG_TLS_CA_FILE,
  // TG_TLS_CERT_FILE and TG_TLS_KEY_FILE (unset: skipped). What a client
  // program's grpc:// sessions use.
  static absl::StatusOr<RpcSecurity> FromEnvironment();
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_SECURITY_H_
