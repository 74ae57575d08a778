#!/usr/bin/env bash
# `make test-tsan`: runs the ThreadSanitizer flavour's tests (docs/threads.md).
# Every instrumented process (unit-test binaries, and each `gpuscope serve` an
# integration test starts) writes its reports to one folder; any report there
# fails the run, even one printed at an agent's exit that its test ignored.
set -euo pipefail
build=${1:-build/tsan}
regex=${2:?"usage: $0 BUILD_DIR CTEST_REGEX [ctest flags...]"}
shift 2
source_dir=$(pwd)
reports="$source_dir/$build/tsan-reports"
rm -rf "$reports"
mkdir -p "$reports"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$reports/report suppressions=$source_dir/tests/tsan.supp ${TSAN_OPTIONS:-}"
status=0
(cd "$build" && ctest "$@" -R "$regex") || status=$?
if compgen -G "$reports/report*" >/dev/null; then
  for report in "$reports"/report*; do
    echo "== $report"
    cat "$report"
  done
  echo "test-tsan: ThreadSanitizer reported problems (above; also in $reports)" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "test-tsan: tests failed (no ThreadSanitizer report)" >&2
  exit "$status"
fi
echo "test-tsan: no ThreadSanitizer report"
