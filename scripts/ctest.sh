#!/usr/bin/env bash
# Runs ctest in a build folder (args after the folder go to ctest), then lists
# every skipped test with its reason: ctest itself only says "Skipped".
# A test skips when a plain clone lacks something (../shared/reference/data
# beside the checkout, a tool scripts/setup.sh installs); under CI=true those
# are failures instead (tests/integration/gpuscope_testlib.py, tests/unit/test_need.h).
set -uo pipefail
build=$1
shift
cd "$build" || exit 1
ctest "$@"
rc=$?
log=Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -qE "^SKIPPED: |: Skipped$" "$log"; then
  echo "Skip reasons:"
  # Each test's output follows its "<n>/<m> Test: <name>" line in the log.
  # Scripts print "SKIPPED: <reason>"; GoogleTest "<file>:<line>: Skipped"
  # with the reason on the next line.
  awk '/^[0-9]+\/[0-9]+ Test: / { name = $3 }
       gtest { gtest = 0; sub(/^SKIPPED: /, ""); print "  " name ": " $0; next }
       /: Skipped$/ { gtest = 1 }
       /^SKIPPED: / { sub(/^SKIPPED: /, ""); print "  " name ": " $0 }' "$log" | sort -u
fi
exit $rc
