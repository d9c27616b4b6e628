#include "distributed/rpc_security.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/platform/file.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// A credential file's bytes; a file that cannot be read is a bad setting.
absl::StatusOr<std::string> ReadWhole(const std::string& path, const char* what) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path, absl::StrCat("the ", what, " file"));
  if (!bytes.ok()) return errors::InvalidArgument(bytes.status().message());
  return bytes;
}

}  // namespace

absl::StatusOr<RpcSecurity> RpcSecurity::FromFiles(const std::string& auth_token_file,
                                                   const std::string& tls_ca_file,
                                                   const std::string& tls_cert_file,
                                                   const std::string& tls_key_file) {
  RpcSecurity out;
  if (!auth_token_file.empty()) {
    TG_ASSIGN_OR_RETURN(std::string token, ReadWhole(auth_token_file, "auth token"));
    out.auth_token = std::string(absl::StripAsciiWhitespace(token));
    if (out.auth_token.empty()) {
      return errors::InvalidArgument("the auth token file '", auth_token_file, "' is empty");
    }
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return errors::InvalidArgument("TLS needs both a certificate and its key; got only the ",
                                   tls_cert_file.empty() ? "key '" : "certificate '",
                                   tls_cert_file.empty() ? tls_key_file : tls_cert_file, "'");
  }
  if (!tls_ca_file.empty()) {
    TG_ASSIGN_OR_RETURN(out.tls_ca, ReadWhole(tls_ca_file, "TLS CA certificate"));
  }
  if (!tls_cert_file.empty()) {
    TG_ASSIGN_OR_RETURN(out.tls_cert, ReadWhole(tls_cert_file, "TLS certificate"));
    TG_ASSIGN_OR_RETURN(out.tls_key, ReadWhole(tls_key_file, "TLS key"));
  }
  return out;
}

absl::StatusOr<RpcSecurity> RpcSecurity::FromEnvironment() {
  auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value == nullptr ? "" : value);
  };
  absl::StatusOr<RpcSecurity> out = FromFiles(env("TG_AUTH_TOKEN_FILE"), env("TG_TLS_CA_FILE"),
                                              env("TG_TLS_CERT_FILE"), env("TG_TLS_KEY_FILE"));
  if (!out.ok()) return WithContext(out.status(), "from the TG_* environment variables");
  return out;
}

}  // namespace tensorgrid
