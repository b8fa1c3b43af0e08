#!/usr/bin/env bash
# Regenerate requirements.lock: the runtime dependencies of pyproject.toml resolved in a fresh
# Python 3.11 virtual environment, every version pinned (pip, and the project itself, left out).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(mktemp -d)/venv"
python3.11 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip "setuptools>=69" wheel  # pip 23 fails on lxml extras
"$venv/bin/pip" install --quiet .
# the image's Python is Debian's 3.11.2: redis needs async-timeout below 3.11.3 (a marker the
# host's newer 3.11 skips)
"$venv/bin/pip" install --quiet async-timeout
{
  echo "# Pinned runtime dependencies of the deployment image (Python 3.11, Linux x86_64)."
  echo "# Regenerate: deploy/lock.sh (a fresh venv, pip install ., pip freeze --all)."
  "$venv/bin/pip" freeze --all | grep -v -E '^(pip|topicrawl)[= @]'
} > requirements.lock
rm -rf "$(dirname "$venv")"
echo "requirements.lock: $(grep -vc '^#' requirements.lock) pinned packages"
