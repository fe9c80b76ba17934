# Sourced: two test hosts h1 and h2 on this machine (../shared/TEST_HOSTS.md):
# network namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2), an rsh
# agent for Open MPI, torn down on exit. Where `ip` (iproute2) is missing or
# cannot make namespaces (a GPU machine without the package), the hosts are
# UTS namespaces alone, each with its own hostname, over loopback: MPI still
# sees two nodes and its traffic between them goes over TCP, on `lo`
# (TEST_HOSTS=loopback picks this where ip exists too). The caller defines
# skip() (exit 77 with a reason) and calls make_test_hosts; then in_h1
# COMMAND runs a shell command on h1, mpirun_across MPIRUN PER_HOST ARGS... an
# Open MPI launch over both hosts from h1 (PER_HOST ranks on each, mapped by
# node, or as TWO_HOSTS_MAP_BY says (slot: in blocks), every CUMPI_* and UCX_*
# variable set here forwarded),
# in_h2_background COMMAND a command on h2 in the background, and
# $h2_address is h2's address. Commands on h1 are killed after $hosts_limit
# seconds (600 unless set).
hosts_tag=$$
h1=cumpih1$hosts_tag h2=cumpih2$hosts_tag
hosts_work=$(mktemp -d)
hosts_kind=  # namespaces or loopback
remove_test_hosts() {
  if [ "$hosts_kind" = namespaces ]; then
    ip netns del "$h1" 2> /dev/null
    ip netns del "$h2" 2> /dev/null
    sed -i "/# cumpi-two-hosts-$hosts_tag\$/d" /etc/hosts
  fi
  rm -rf "$hosts_work"
}
# Network namespaces joined by a veth pair; false (nothing left behind)
# where this machine cannot make them.
make_namespace_hosts() {
  command -v ip > /dev/null || return 1
  if ! { ip netns add "$h1" && ip netns add "$h2" &&
    ip link add "veth1$hosts_tag" type veth peer name "veth2$hosts_tag"; } 2> /dev/null; then
    ip netns del "$h1" 2> /dev/null
    ip netns del "$h2" 2> /dev/null
    return 1
  fi
  hosts_kind=namespaces
  ip link set "veth1$hosts_tag" netns "$h1" && ip link set "veth2$hosts_tag" netns "$h2"
  ip -n "$h1" addr add 10.77.0.1/24 dev "veth1$hosts_tag" && ip -n "$h2" addr add 10.77.0.2/24 dev "veth2$hosts_tag"
  for n in "$h1" "$h2"; do ip -n "$n" link set lo up; done
  ip -n "$h1" link set "veth1$hosts_tag" up && ip -n "$h2" link set "veth2$hosts_tag" up
  printf '10.77.0.1 h1 # cumpi-two-hosts-%s\n10.77.0.2 h2 # cumpi-two-hosts-%s\n' "$hosts_tag" "$hosts_tag" >> /etc/hosts
  hosts_net=10.77.0.0/24 h2_address=10.77.0.2
  enter_h1="ip netns exec $h1" enter_h2="ip netns exec $h2"
}
# Hostnames alone (UTS namespaces), traffic over loopback. h1 and h2 must not
# resolve: Open MPI would take a name of a local address for this host.
make_loopback_hosts() {
  unshare --uts true 2> /dev/null || skip "cannot make UTS namespaces here (unshare --uts)"
  ! getent hosts h1 > /dev/null && ! getent hosts h2 > /dev/null || skip "h1 or h2 resolves here: no loopback hosts"
  hosts_kind=loopback hosts_net=lo h2_address=127.0.0.1 enter_h1= enter_h2=
}
make_test_hosts() {
  [ "$(id -u)" = 0 ] || skip "needs root to make test hosts (namespaces)"
  command -v unshare > /dev/null || skip "needs unshare (util-linux)"
  trap remove_test_hosts EXIT
  if [ "${TEST_HOSTS:-namespaces}" = loopback ] || ! make_namespace_hosts; then
    make_loopback_hosts
  fi
  echo "test hosts: $hosts_kind"
  cat > "$hosts_work/agent" << AGENT
#!/bin/bash
while [[ "\$1" == -* ]]; do shift; done
host=\$1; shift
[ "\$host" = h1 ] && enter="$enter_h1" || enter="$enter_h2"
exec \$enter unshare --uts sh -c "hostname \$host; \$*"
AGENT
  chmod +x "$hosts_work/agent"
}
in_h1() { timeout --kill-after=10 "${hosts_limit:-600}" $enter_h1 unshare --uts sh -c "hostname h1; $*"; }
in_h2_background() { $enter_h2 unshare --uts sh -c "hostname h2; $*" & }
mpirun_across() {  # mpirun_across MPIRUN PER_HOST ARGS...
  local mpirun=$1 per_host=$2 forwarded= name
  shift 2
  for name in $(compgen -e | grep -E '^(CUMPI|UCX)_'); do forwarded+=" -x $name"; done
  in_h1 "$mpirun --allow-run-as-root --oversubscribe --host h1:$per_host,h2:$per_host -np $((2 * per_host)) \
    --map-by ${TWO_HOSTS_MAP_BY:-node} --bind-to none --mca plm_rsh_agent $hosts_work/agent --mca btl tcp,self,vader \
    --mca btl_tcp_if_include $hosts_net --mca oob_tcp_if_include $hosts_net $forwarded $*"
}
