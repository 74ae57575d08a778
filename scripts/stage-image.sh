#!/usr/bin/env bash
# The container image's build stage, also run on the host by the tests
# (tests/integration/test_image_stage.py, test_deb.py) and by `make deb`, so the
# image, the package and what was tested cannot drift: a packager's plain
# Release configure, the agent with its modules and the simulator built, and
# `cmake --install --strip` into DESTDIR with prefix /usr:
#   DESTDIR/usr/bin/gpuscope
#   DESTDIR/usr/lib/gpuscope/libgpuscope-*.so         (kubelet/CRI gRPC, HTTP client, OTLP)
#   DESTDIR/usr/lib/gpuscope/sim/libnvidia-ml.so.1    (the NVML simulator) and scenarios/
#   DESTDIR/usr/lib/gpuscope/slurm/                   (the Slurm prolog and epilog)
#   DESTDIR/usr/share/gpuscope/                       (rules, dashboards, runbooks, examples)
#   DESTDIR/usr/share/man/man1/gpuscope.1.gz and the bash and zsh completions
#
#   scripts/stage-image.sh DESTDIR [BUILD_DIR]      (BUILD_DIR default: build/image)
# More configure flags in GPUSCOPE_CMAKE_ARGS (the Makefile adds
# -DGPUSCOPE_WERROR=ON); GPUSCOPE_GIT_COMMIT names the commit where the source
# has no .git (a docker build context).
set -euo pipefail
dest=$(realpath -m "${1:?usage: scripts/stage-image.sh DESTDIR [BUILD_DIR]}")
build=$(realpath -m "${2:-$(dirname "$0")/../build/image}")
[ "$dest" != / ] || { echo "stage-image: DESTDIR must not be /" >&2; exit 2; }
cd "$(dirname "$0")/.."
# ccache, where there is one, hits across checkouts in other folders.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
read -r -a extra <<<"${GPUSCOPE_CMAKE_ARGS:-}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DGPUSCOPE_GIT_COMMIT="${GPUSCOPE_GIT_COMMIT:-}" "${extra[@]}" >/dev/null
cmake --build "$build" --target gpuscope gpuscope_manpage -j"$(nproc)"
rm -rf "$dest"
DESTDIR="$dest" cmake --install "$build" --prefix /usr --strip >/dev/null
echo "stage-image: $dest ($(du -sh "$dest" | cut -f1))"
