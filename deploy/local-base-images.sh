#!/usr/bin/env bash
# Make the base images the deployment needs WITHOUT a registry, from Debian's packages, tagged
# with the official names docker-compose.yml and the Dockerfile use, so those files stay as a
# user with a registry runs them:
#   debian:bookworm-slim  a Debian bookworm root made by debootstrap (--variant=minbase), imported
#   postgres:15           Debian's postgresql-15 with the official image's POSTGRES_* set-up
#   redis:7               Debian's redis-server (7.0)
# Also copies the host's local CA certificates (/usr/local/share/ca-certificates/*.crt) into
# deploy/ca-certificates/, which the project image trusts (pip through a re-signing proxy).
# An image that exists already is kept (--force makes them again). Needs root (debootstrap)
# and a running engine (deploy/start-engine.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
force=0
[ "${1:-}" = "--force" ] && force=1
cache="${TOPICRAWL_BASE_CACHE:-/var/tmp/topicrawl-base}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

have() { [ "$force" = 0 ] && docker image inspect "$1" >/dev/null 2>&1; }
say() { printf 'local-base-images: %s\n' "$*"; }
# a non-root user can run a program in it (a root directory of mode 0700, as mktemp makes it,
# left every image built on it unusable for the images' non-root users)
usable() { docker run --rm --user 65534 --entrypoint /bin/true "$1" >/dev/null 2>&1; }
if have debian:bookworm-slim && ! usable debian:bookworm-slim; then
  say "debian:bookworm-slim is unusable by non-root users: making the base images again"
  force=1
  rm -f "$cache/bookworm-minbase.tar"
fi

# the host's local certificate authorities, for the project image's build
shopt -s nullglob
cas=(/usr/local/share/ca-certificates/*.crt)
if [ ${#cas[@]} -gt 0 ]; then
  cp -f "${cas[@]}" deploy/ca-certificates/
  say "trusting ${#cas[@]} local CA certificate(s) in the project image"
fi

if ! have debian:bookworm-slim; then
  start=$(date +%s)
  mkdir -p "$cache"
  tarball="$cache/bookworm-minbase.tar"
  if [ ! -s "$tarball" ] || [ "$force" = 1 ]; then
    root="$(mktemp -d "$cache/rootfs.XXXX")"
    chmod 0755 "$root"  # the image's / (mktemp makes it 0700)
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
      || { tail -n 20 "$cache/debootstrap.log" >&2; exit 1; }
    echo "deb $mirror bookworm main" >"$root/etc/apt/sources.list"
    # the host's apt settings that let apt-get update work from here (a mirror snapshot)
    for conf in /etc/apt/apt.conf.d/*; do
      grep -qs 'Check-Valid-Until' "$conf" && cp "$conf" "$root/etc/apt/apt.conf.d/"
    done
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
    tar -C "$root" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf "$root"
  fi
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    --message "debootstrap --variant=minbase bookworm (topicrawl local stand-in)" \
    "$tarball" debian:bookworm-slim >/dev/null
  say "debian:bookworm-slim imported from debootstrap ($(($(date +%s) - start)) s)"
fi

for image in postgres:15 redis:7; do
  if ! have "$image"; then
    start=$(date +%s)
    name="${image%%:*}"
    docker build -q -t "$image" --label topicrawl.local-stand-in=1 "deploy/images/$name" >/dev/null
    say "$image built from Debian's packages ($(($(date +%s) - start)) s)"
  fi
done
say "ready: debian:bookworm-slim postgres:15 redis:7"
