#!/usr/bin/env bash
# A running Docker engine for Greenloop's docker sandbox and its tests (run as
# root; idempotent): installs docker.io when dockerd is missing, starts dockerd
# in the background when no engine answers, and waits until `docker info` does.
#
# The engine runs without iptables or a default bridge (sandboxes use
# network=none; CI machines have no firewall to program) and with overlay2
# when the kernel and backing filesystem allow it, vfs otherwise.
# Log: $GREENLOOP_DOCKERD_LOG (default /var/log/greenloop-dockerd.log);
# GREENLOOP_DOCKER_STORAGE overrides the storage drivers tried, in order.
set -euo pipefail

LOG=${GREENLOOP_DOCKERD_LOG:-/var/log/greenloop-dockerd.log}

engine_up() { timeout 5 docker info >/dev/null 2>&1; }

if [ "$(id -u)" != 0 ]; then
  echo "setup-docker: needs root" >&2
  exit 1
fi

bash "$(dirname "$0")/install-section.sh" docker

if engine_up; then
  echo "setup-docker: engine already running"
  exit 0
fi

# A stale pid file from a dead daemon stops a new one from starting.
for pidfile in /var/run/docker.pid /run/containerd/containerd.pid; do
  if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then rm -f "$pidfile"; fi
done

start() {  # $1: storage driver; returns 0 once the engine answers
  echo "setup-docker: starting dockerd (storage driver $1)" >>"$LOG"
  nohup dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver="$1" \
    >>"$LOG" 2>&1 </dev/null &
  local pid=$!
  for _ in $(seq 1 120); do
    if engine_up; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    sleep 0.5
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return 1
}

started=
for driver in ${GREENLOOP_DOCKER_STORAGE:-overlay2 vfs}; do
  if start "$driver"; then started=$driver; break; fi
done
if [ -n "$started" ]; then
  echo "setup-docker: engine up ($(docker info --format '{{.Driver}}' 2>/dev/null))"
else
  echo "setup-docker: dockerd did not start; see $LOG" >&2
  tail -n 30 "$LOG" >&2 || true
  exit 1
fi
