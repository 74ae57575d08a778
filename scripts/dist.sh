#!/usr/bin/env bash
# A self-contained copy of the agent for a machine that installs nothing
# (a GPU host, the device check): dist/gpuscope/gpuscope with the shared
# libraries it needs beside it in lib/ (found through the binary's $ORIGIN/lib
# rpath), and the simulator with its scenarios in sim/. glibc itself stays the
# host's: the host needs a glibc at least as new as the build machine's.
#
#   scripts/dist.sh [BUILD_DIR] [OUT_DIR]     (defaults: build/release dist/gpuscope)
set -euo pipefail
build=${1:-build/release}
out=${2:-dist/gpuscope}
bin="$build/gpuscope"
[ -x "$bin" ] || { echo "dist: $bin is missing: build first (make build)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/lib" "$out/sim"
cp "$bin" "$out/"
strip --strip-debug "$out/gpuscope"
# The modules loaded on first use (src/base/module.h) go in lib/ too; they
# find their own dependencies there through their $ORIGIN rpath.
modules=("$build"/libgpuscope-*.so)
cp "${modules[@]}" "$out/lib/"
# Every resolved dependency of the binary, the modules and GnuTLS (loaded on
# first use for TLS, src/http/gnutls_on_demand.h) except glibc's own libraries
# and the loader.
# awk reads to the end: an early exit would kill ldconfig with SIGPIPE, which
# pipefail and set -e turn into a silent failure of the whole script.
gnutls=$(ldconfig -p | awk '$1 == "libgnutls.so.30" && $NF ~ /^\// && !found {print $NF; found = 1}')
[ -n "$gnutls" ] || { echo "dist: libgnutls.so.30 is not installed (apt install libgnutls30)" >&2; exit 1; }
cp -L "$gnutls" "$out/lib/"
ldd "$bin" "${modules[@]}" "$gnutls" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
strip --strip-debug "$out"/lib/*.so* 2>/dev/null || true
cp -L "$build"/sim/libnvidia-ml.so.1 "$out/sim/"
cp -r "$build/sim/scenarios" "$out/sim/"
# Check that the copy resolves every library from itself or glibc.
missing=$(LD_LIBRARY_PATH='' ldd "$out/gpuscope" "$out"/lib/libgpuscope-*.so | grep 'not found' || true)
if [ -n "$missing" ]; then
  echo "dist: a library is missing from $out/lib:" >&2
  echo "$missing" >&2
  exit 1
fi
# No RUNPATH entry may be empty or relative: the loader reads those from the
# current directory, wherever the copy is run (as root).
for elf in "$out/gpuscope" "$out"/lib/*.so* "$out"/sim/*.so*; do
  runpath=$(readelf -d "$elf" | sed -n 's/.*Library r\(un\)\{0,1\}path: \[\(.*\)\]$/\2/p')
  [ -n "$runpath" ] || continue
  while IFS= read -r -d : entry; do
    # shellcheck disable=SC2016  # a literal $ORIGIN
    case $entry in
      /* | '$ORIGIN' | '$ORIGIN/'* | '${ORIGIN}' | '${ORIGIN}/'*) ;;
      *) echo "dist: $elf searches '$entry' (RUNPATH $runpath): relative to the current directory" >&2
         exit 1 ;;
    esac
  done <<< "$runpath:"
done
echo "dist: $out ($(du -sh "$out" | cut -f1), $(find "$out/lib" -mindepth 1 -maxdepth 1 | wc -l) libraries)"
