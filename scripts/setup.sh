#!/usr/bin/env bash
# Installs every Debian 12 package gpuscope needs to build, test and run its
# integration stack. Idempotent: installs only what is missing.
set -euo pipefail

packages=(
  # build
  g++ make cmake pkg-config ccache clang-format
  # packaging (make deb, its test): dpkg-shlibdeps and lintian
  dpkg-dev lintian
  # a C client like nvtop's start-up (cc; nvtop itself is in contrib) and nm for the symbol test
  gcc binutils
  # fuzzing: clang and its runtime (libFuzzer) of the same version
  clang libclang-rt-14-dev
  libmicrohttpd-dev libgnutls28-dev libyaml-cpp-dev libfmt-dev
  nlohmann-json3-dev libcli11-dev libcrypt-dev libcurl4-gnutls-dev zlib1g-dev libdeflate-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-yaml curl openssl
  python3-grpcio apache2-utils prometheus prometheus-alertmanager prometheus-node-exporter
  wrk nginx-light valgrind procps docker-compose systemd
  # a one-node Slurm (job reports, remediation) and VictoriaMetrics with vmagent and
  # vmalert (the fleet deployments); tests start their own daemons
  slurmctld slurmd slurm-client munge victoria-metrics
  # shellcheck for the Slurm prolog and epilog (tests/integration/test_slurm_scripts.py)
  shellcheck
  # a terminal emulator for `gpuscope top` (tests/integration/test_top_tmux.py)
  tmux
)
# kubectl for the kustomize check (tests/integration/test_deploy_static.py):
# Debian's kubernetes-client (kubectl 1.20, kustomize built in), unless some
# kubectl is already installed (a second package would clash on its path).
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
# The web page (web/): Debian's nodejs and npm for its npm packages, unless a
# node with npm is already installed; chromium for the page tests.
packages+=(chromium)
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # Debian's server packages try to start their services; tests start their own.
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The web page's npm packages, from web/package-lock.json into the git-ignored
# web/node_modules: uPlot (embedded into the binary at build time) and
# puppeteer-core (the page tests). Again when the lock file changed.
web="$(cd "$(dirname "$0")/.." && pwd)/web"
if [ ! -f "$web/node_modules/.package-lock.json" ] ||
   [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in web/"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
fi

# The OpenTelemetry JS SDK of the application-KPI test apps (tests/integration/otel_app,
# test_otlp_apps.py), from its own package-lock.json into its git-ignored node_modules.
otel_app="$(cd "$(dirname "$0")/.." && pwd)/tests/integration/otel_app"
if [ ! -f "$otel_app/node_modules/.package-lock.json" ] ||
   [ "$otel_app/package-lock.json" -nt "$otel_app/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in tests/integration/otel_app/"
  (cd "$otel_app" && npm ci --no-audit --no-fund --loglevel=error)
fi
