# shellcheck shell=bash
# Simulated hosts for shell tests (issue 22, item 7): one network namespace
# per host, each with its own address on a bridge that lives in one more
# namespace. Nothing is added to the machine's own namespace and no
# namespace has a default route, so no packet can leave them. Needs root
# (the test skips otherwise, or when `ip netns add` fails). Source it after
# cluster_lib.sh and skip_lib.sh, with TMP set:
#
#   netns_hosts ps w0 w1        # namespaces ${NS[ps]}, ... at ${ADDR[ps]}=10.231.Z.1, .2, ...
#   ip netns exec "${NS[w0]}" PROGRAM ...
#   netns_delete                # in the test's EXIT trap
#   netns_on w0 "$TMP/hosts"; "${ON[@]}" PROGRAM ...
#                               # PROGRAM in w0's namespace, with that hosts file
#
# The bridge's port for host NAME is NAME (in $BR); the host's end is eth0.

declare -A NS ADDR
NETNS_MADE=()
PREFIX="tg$$r$RANDOM"
BR="$PREFIX-br"
NET="10.231.$((RANDOM % 250 + 1))"

netns_delete() {
  local ns
  for ns in "${NETNS_MADE[@]}"; do ip netns delete "$ns" 2>/dev/null; done
}

# make_ns NAME: a namespace with lo up; skips the test if it cannot be made.
make_ns() {
  if ! ip netns add "$1" 2>"$TMP/netns.err"; then
    ((${#NETNS_MADE[@]} == 0)) && skip_test "cannot make a network namespace: $(cat "$TMP/netns.err")"
    fail "ip netns add $1: $(cat "$TMP/netns.err")"
    exit 1
  fi
  NETNS_MADE+=("$1")
  ip -n "$1" link set lo up || { fail "lo up in $1"; exit 1; }
}

# join NS PORT ADDRESS: a veth pair made inside the bridge namespace, one end
# (PORT) on the bridge, the other moved straight into NS as eth0 with
# ADDRESS/24; it never passes through the machine's own namespace.
join() {
  ip -n "$BR" link add "$2" type veth peer name eth0 netns "$1" &&
    ip -n "$BR" link set "$2" master br0 &&
    ip -n "$BR" link set "$2" up &&
    ip -n "$1" addr add "$3/24" dev eth0 &&
    ip -n "$1" link set eth0 up || { fail "joining $1 to the bridge as $3"; exit 1; }
}

# netns_hosts NAME...: the bridge and one host per NAME, then the isolation
# checks (no default route, no route to an outside address, nothing of the
# test's in the machine's own namespace).
netns_hosts() {
  [[ $(id -u) -eq 0 ]] || skip_test "network namespaces need root (running as uid $(id -u))"
  command -v ip >/dev/null || skip_test "no ip command (iproute2)"
  local name i=1 ns
  make_ns "$BR"
  ip -n "$BR" link add br0 type bridge && ip -n "$BR" link set br0 up ||
    { fail "bridge in $BR"; exit 1; }
  for name in "$@"; do
    NS[$name]="$PREFIX-$name"
    ADDR[$name]="$NET.$i"
    make_ns "${NS[$name]}"
    join "${NS[$name]}" "$name" "${ADDR[$name]}"
    i=$((i + 1))
  done
  for ns in "${NETNS_MADE[@]}"; do
    [[ -z "$(ip -n "$ns" route show default)" ]] || fail "$ns has a default route"
    ip -n "$ns" route get 192.0.2.1 >/dev/null 2>&1 && fail "$ns routes to 192.0.2.1"
  done
  ip -o link show | grep -q "link-netns $PREFIX" &&
    fail "a link of the test's namespaces is in the root namespace: $(ip -o link show | grep "link-netns $PREFIX")"
  [[ -z "$(ip -o addr show to "$NET.0/24")" ]] || fail "the root namespace has an address in $NET.0/24"
  ((failures == 0)) || exit 1
}

# netns_on NAME HOSTS_FILE: ON becomes the command prefix that runs a command
# in host NAME's network namespace (nsenter --net) and in a mount namespace
# of its own (unshare --mount) where HOSTS_FILE is bind-mounted over
# /etc/hosts: names resolve through it for that command (and its children)
# only. Unlike `ip netns exec`, /sys stays the machine's (cgroups included).
netns_on() {
  command -v nsenter >/dev/null && command -v unshare >/dev/null ||
    skip_test "no nsenter or unshare (util-linux)"
  ON=(nsenter --net="/run/netns/${NS[$1]}" unshare --mount --propagation private
    sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$2")
}
