#!/bin/bash
# Regenerates the TLS test certificates in this directory (they are checked
# in so that tests need no openssl at run time). Test-only keys: never use
# them for anything real.
#
#   ca.pem                 a CA that signs the two below
#   server.pem/.key        CN=tensorgrid-test-server, SAN 127.0.0.1 and localhost
#   client.pem/.key        CN=tensorgrid-test-client (for mutual TLS)
#   other_ca.pem           an unrelated CA: peers checked against it fail
set -euo pipefail
cd "$(dirname "$0")"
DAYS=36500
openssl req -x509 -newkey rsa:2048 -nodes -days $DAYS -subj "/CN=tensorgrid-test-ca" \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days $DAYS -subj "/CN=tensorgrid-other-ca" \
  -keyout other_ca.key -out other_ca.pem 2>/dev/null
for who in server client; do
  openssl req -newkey rsa:2048 -nodes -subj "/CN=tensorgrid-test-$who" \
    -keyout "$who.key" -out "$who.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >"$who.ext"
  openssl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days $DAYS \
    -extfile "$who.ext" -out "$who.pem" 2>/dev/null
  rm "$who.csr" "$who.ext"
done
rm -f ca.key other_ca.key ca.srl
