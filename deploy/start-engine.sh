#!/usr/bin/env bash
# Start a container engine on a machine without one (Debian, root): Debian's docker.io and
# docker-compose (1.29) packages, dockerd with the vfs storage driver (works where overlayfs
# does not, e.g. inside another container) in the background. Does nothing when `docker info`
# already answers. Exit status 1 (and one line why) when no engine can run here.
set -euo pipefail
if docker info >/dev/null 2>&1; then
  exit 0
fi
if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null \
    || ! command -v debootstrap >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "start-engine: no docker engine, and cannot install one (needs root and apt-get)" >&2
    exit 1
  fi
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io docker-compose debootstrap >/dev/null
fi
log="${DOCKERD_LOG:-/var/log/dockerd.log}"
nohup dockerd --storage-driver=vfs >"$log" 2>&1 &
for _ in $(seq 60); do
  docker info >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "start-engine: dockerd did not start; its log ($log) ends with:" >&2
tail -n 5 "$log" >&2
exit 1
