#!/usr/bin/env bash
# Builds the Debian package from a tree that scripts/stage-image.sh installed:
# OUT_DIR/gpuscope_<version>_<arch>.deb with /usr/bin/gpuscope, the modules and
# the simulator under /usr/lib/gpuscope, the Slurm prolog and epilog under
# /usr/lib/gpuscope/slurm, the rules, PrometheusRule, dashboards, runbooks and
# example scrape configs under /usr/share/gpuscope, the man page and shell
# completions (all from cmake/install_share.cmake), the systemd unit of
# deploy/systemd (pointed at /usr/bin and the gpuscope system user that
# postinst makes), the conffiles /etc/gpuscope/gpuscope.yaml and
# report-thresholds.yaml, Depends computed by dpkg-shlibdeps, the copyright
# and changelog under /usr/share/doc/gpuscope, and lintian overrides (each
# with its reason) from deploy/debian/lintian-overrides.
#
#   scripts/build-deb.sh STAGED_ROOT OUT_DIR        (make deb: build/stage, dist)
set -euo pipefail
staged=$(realpath "${1:?usage: scripts/build-deb.sh STAGED_ROOT OUT_DIR}")
out=$(realpath -m "${2:?usage: scripts/build-deb.sh STAGED_ROOT OUT_DIR}")
repo=$(cd "$(dirname "$0")/.." && pwd)
pkg=$(mktemp -d)
trap 'rm -rf "$pkg"' EXIT

# The version is the binary's own (CMakeLists.txt's project version).
version=$("$staged/usr/bin/gpuscope" --version | awk 'NR == 1 {print $2}')
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "build-deb: bad version '$version'" >&2; exit 1; }
arch=$(dpkg --print-architecture)
# Who answers for the package: set it when you publish one.
maintainer=${GPUSCOPE_DEB_MAINTAINER:-gpuscope maintainers <maintainers@gpuscope.example.org>}
root="$pkg/root"

cp -a "$staged" "$root"
install -D -m 0644 "$repo/deploy/debian/gpuscope.yaml" "$root/etc/gpuscope/gpuscope.yaml"
# The thresholds a site tunes for `gpuscope report` (the epilog's
# GPUSCOPE_REPORT_ARGS="--thresholds /etc/gpuscope/report-thresholds.yaml").
install -m 0644 "$root/usr/share/gpuscope/reports/thresholds.yaml" \
  "$root/etc/gpuscope/report-thresholds.yaml"
for f in usr/share/man/man1/gpuscope.1.gz usr/share/bash-completion/completions/gpuscope \
         usr/lib/gpuscope/slurm/gpuscope-prolog \
         usr/share/gpuscope/prometheus/rules/gpu-health.yml; do
  [ -f "$root/$f" ] || { echo "build-deb: the staged tree lacks /$f" >&2; exit 1; }
done
install -D -m 0644 "$repo/deploy/debian/lintian-overrides" \
  "$root/usr/share/lintian/overrides/gpuscope"
# The unit of deploy/systemd, for a packaged install: the binary in /usr/bin
# with the conffile, and the fixed system user instead of DynamicUser.
install -d "$root/lib/systemd/system"
sed -e 's|^ExecStart=/usr/local/bin/gpuscope serve|ExecStart=/usr/bin/gpuscope serve --config /etc/gpuscope/gpuscope.yaml|' \
    -e 's|^DynamicUser=yes|User=gpuscope\nGroup=gpuscope|' \
    -e '/^#   install /d' -e '/^#   systemctl /d' \
    "$repo/deploy/systemd/gpuscope.service" >"$root/lib/systemd/system/gpuscope.service"
grep -q '^User=gpuscope$' "$root/lib/systemd/system/gpuscope.service"
grep -q '^ExecStart=/usr/bin/gpuscope ' "$root/lib/systemd/system/gpuscope.service"
chmod 0644 "$root/lib/systemd/system/gpuscope.service"

doc="$root/usr/share/doc/gpuscope"
install -D -m 0644 "$repo/deploy/debian/copyright" "$doc/copyright"
# A native package's changelog: this release's CHANGELOG.md section.
date=$(awk -v v="$version" '$0 ~ "^## \\[" v "\\]" {print $NF; exit}' "$repo/CHANGELOG.md")
[ -n "$date" ] || { echo "build-deb: CHANGELOG.md has no '## [$version] - DATE' section" >&2; exit 1; }
{
  echo "gpuscope ($version) stable; urgency=medium"
  echo
  # Each entry on one line, then wrapped to Debian's 80 columns.
  awk -v v="$version" '$0 ~ "^## \\[" v "\\]" {on = 1; next} /^## / {on = 0}
       on && /^- / {if (e != "") print e; e = substr($0, 3); next}
       on && /^  / {sub(/^ +/, ""); e = e " " $0} END {if (e != "") print e}' "$repo/CHANGELOG.md" |
    while read -r entry; do
      fold -s -w 72 <<<"$entry" | sed -e 's/ *$//' -e '1s/^/  * /' -e '2,$s/^/    /'
    done
  echo
  echo " -- $maintainer  $(date -R -u -d "$date")"
} | gzip -9n >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
for f in "$repo"/docs/*.md; do install -m 0644 "$f" "$doc/"; done
gzip -9n "$doc"/*.md

# Depends: the shared libraries of every ELF file, through dpkg-shlibdeps
# (which wants a debian/control beside it), and libgnutls30, which the agent
# loads on first use for TLS and basic auth (src/http/gnutls_on_demand.h), so
# that no ELF file names it.
mkdir -p "$pkg/src/debian" "$root/DEBIAN"
printf 'Source: gpuscope\n\nPackage: gpuscope\nArchitecture: any\n' >"$pkg/src/debian/control"
mapfile -t elves < <(find "$root/usr" -type f \( -name gpuscope -o -name '*.so*' \))
depends=$(cd "$pkg/src" && dpkg-shlibdeps -O "${elves[@]/#/-e}" 2>/dev/null |
          sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: gpuscope
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_kb
Depends: adduser, libgnutls30, $depends
Section: admin
Priority: optional
Description: GPU observability agent for AI/ML clusters (NVIDIA)
 gpuscope reads NVIDIA GPUs through NVML and serves dcgm-exporter-compatible
 Prometheus metrics on :9400 without DCGM, nvidia-smi's query CSV byte for
 byte, health checks with runbooks, a diagnosis of bottlenecks (compute,
 memory, thermal and power throttling, interconnect, idle) and a live web page.
 It includes an NVML simulator for trying it on machines without a GPU, the
 Slurm prolog and epilog, and the Prometheus rules, Grafana dashboards and
 runbooks under /usr/share/gpuscope.
CONTROL
printf '%s\n' /etc/gpuscope/gpuscope.yaml /etc/gpuscope/report-thresholds.yaml \
  >"$root/DEBIAN/conffiles"
install -m 0755 "$repo"/deploy/debian/{postinst,prerm,postrm} "$root/DEBIAN/"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
   xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/"{control,conffiles,md5sums}

mkdir -p "$out"
deb="$out/gpuscope_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "build-deb: $deb ($(du -h "$deb" | cut -f1))"
