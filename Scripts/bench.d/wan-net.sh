#!/usr/bin/env bash
# The private network namespace of Scripts/bench's wan case.
#
#   wan-net.sh up NAME STATE     make namespace NAME: its own loopback (all of 127.0.0.0/8)
#                                and a veth pair holding 192.0.2.1,
#                                /etc/netns/NAME/hosts (localhost only: the bench's host names
#                                are served by its resolver) and /etc/netns/NAME/resolv.conf
#                                (nameserver 127.0.53.53, the resolver bench.d/wan.py starts
#                                in the namespace). STATE is the directory where the servers
#                                started in it keep their *.pid files.
#   wan-net.sh down NAME STATE   stop the servers listed in STATE/*.pid (each pid signalled
#                                only while its command line still names STATE), delete the
#                                namespace (its nftables ruleset goes with it) and
#                                /etc/netns/NAME; any process still inside the namespace
#                                (only the bench starts processes there) is stopped first.
#                                Safe to call twice, or after a failed `up`.
#
# Nothing outside the namespace changes: no address, route or firewall rule of the machine.
# Needs root (ip netns), iproute2 and nftables.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

up() {
    local name="$1" state="$2"
    mkdir -p "$state"
    if ip netns list | grep -qw -- "$name"; then
        echo "wan-net.sh: namespace $name already exists" >&2
        return 1
    fi
    ip netns add "$name"
    ip -n "$name" link set lo up
    # A non-loopback IPv4 address (TEST-NET-1, on a veth pair whose both ends stay in the
    # namespace): resolvers called with AI_ADDRCONFIG (aria2c's) return no IPv4 address on
    # a machine that has only loopback ones. No traffic goes to it.
    ip -n "$name" link add wan0 type veth peer name wan1
    ip -n "$name" addr add 192.0.2.1/32 dev wan0
    ip -n "$name" link set wan1 up
    ip -n "$name" link set wan0 up
    mkdir -p "/etc/netns/$name"
    printf '127.0.0.1\tlocalhost\n127.0.53.53\tresolver.wan.test\n' >"/etc/netns/$name/hosts"
    # One attempt, one second: a resolver that does not answer is a bench bug, not a case.
    printf 'nameserver 127.0.53.53\noptions timeout:1 attempts:1\n' >"/etc/netns/$name/resolv.conf"
    echo "$name" >"$state/netns"
}

owned() { # PID STATE: the process still runs a command line that names STATE
    [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "$2"
}

stop_pid() { # PID: TERM, then KILL after three seconds
    local i
    kill -TERM "$1" 2>/dev/null || return 0
    for i in $(seq 1 30); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$1" 2>/dev/null || true
}

down() {
    local name="$1" state="$2" f pid
    if [ -d "$state" ]; then
        for f in "$state"/*.pid; do
            [ -f "$f" ] || continue
            pid="$(head -1 "$f" 2>/dev/null | tr -dc 0-9 || true)"
            if [ -n "$pid" ] && owned "$pid" "$state"; then stop_pid "$pid"; fi
            rm -f "$f"
        done
    fi
    if ip netns list | grep -qw -- "$name"; then
        # Whatever still runs inside the namespace was started by the bench (nothing else
        # knows it): a tool cut off by a signal, a server whose pid file was lost.
        for pid in $(ip netns pids "$name" 2>/dev/null || true); do stop_pid "$pid"; done
        ip netns delete "$name"
    fi
    rm -rf "/etc/netns/$name"
    rm -f "$state/netns" 2>/dev/null || true
}

case "${1:-}" in
    up) [ $# -eq 3 ] || { sed -n '2,18p' "$0"; exit 2; }; up "$2" "$3" ;;
    down) [ $# -eq 3 ] || { sed -n '2,18p' "$0"; exit 2; }; down "$2" "$3" ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
esac
