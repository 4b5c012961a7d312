#!/usr/bin/env bash
# The lint gate (.ci/run runs it; run it from anywhere): go.mod tidy
# (rewind's and this module's), the analyzers (rowserrcheck,
# sqlclosecheck, bodyclose), cognitive complexity against cognit.txt,
# the engine package's size (≤ 6,000 lines, AGENTS.md) and the test
# packages' TestMains (through rewindbin, AGENTS.md). `lint.sh -update` rewrites cognit.txt instead of checking
# it. The analyzers build once into $REWIND_LINT_BIN (default
# ${TMPDIR:-/tmp}/rewind-lint), in this module so rewind's go.mod gains
# nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${REWIND_LINT_BIN:-${TMPDIR:-/tmp}/rewind-lint}"
go build -C .ci/lint -o "$bin" .
if [ "${1:-}" = "-update" ]; then
	exec "$bin" cognit -update -baseline .ci/lint/cognit.txt .
fi
echo "lint: go mod tidy -diff" >&2
go mod tidy -diff
go -C .ci/lint mod tidy -diff
echo "lint: rowserrcheck, sqlclosecheck, bodyclose" >&2
"$bin" ./...
echo "lint: cognitive complexity" >&2
"$bin" cognit -baseline .ci/lint/cognit.txt .
echo "lint: engine package size" >&2
"$bin" enginesize engine
echo "lint: every package's TestMain ends through rewindbin" >&2
"$bin" testmain .
