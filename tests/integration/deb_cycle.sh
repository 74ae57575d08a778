#!/bin/bash
# The .deb's install, upgrade and purge cycle, run by test_deb.py as root
# inside a chroot whose root is an overlay of this host (writes stay in the
# overlay; the host is untouched). /run is an empty tmpfs: no systemd runs,
# until step 3 makes /run/systemd/system as a running systemd would, with
# deb-systemd-invoke and systemctl replaced by recorders (CALLS).
#
#   deb_cycle.sh OLD.deb NEW.deb PORT      (prints "step N ok" per step)
set -euo pipefail
old=$1 new=$2 port=$3
export CALLS=/tmp/calls PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C
fail() { echo "FAIL: $*" >&2; exit 1; }
# deb-systemd-invoke (what starts and stops the agent) only records;
# systemctl records and runs (deb-systemd-helper enables through its preset).
# shellcheck disable=SC2016  # $* and $CALLS are the recorders', expanded when they run
printf '#!/bin/sh\necho "deb-systemd-invoke $*" >>"$CALLS"\n' >/usr/bin/deb-systemd-invoke
mv /usr/bin/systemctl /usr/bin/systemctl.real
# shellcheck disable=SC2016
printf '#!/bin/sh\necho "systemctl $*" >>"$CALLS"\nexec systemctl.real "$@"\n' >/usr/bin/systemctl
chmod 0755 /usr/bin/deb-systemd-invoke /usr/bin/systemctl
: >"$CALLS"

# 1. A first install without systemd: the user, the config readable by its
# group only, the unit enabled (a symbolic link, as debhelper does, so an
# image built in a chroot starts it on boot), nothing started.
dpkg -i "$old" >/dev/null
getent passwd gpuscope >/dev/null || fail "no gpuscope user"
mode=$(stat -c '%U:%G %a' /etc/gpuscope)
[ "$mode" = "root:gpuscope 750" ] || fail "/etc/gpuscope is $mode"
[ -L /etc/systemd/system/multi-user.target.wants/gpuscope.service ] ||
  fail "the unit is not enabled"
if grep -Eq '^deb-systemd-invoke|^systemctl .*(start|daemon-reload)' "$CALLS"; then
  fail "without systemd, postinst called: $(cat "$CALLS")"
fi
echo "step 1 ok"

# 2. What only the package installed does: serve /metrics on the simulator as
# the unit runs it (user gpuscope, the conffile), the Slurm prolog and epilog
# from their installed paths, the installed rules in promtool.
setpriv --reuid gpuscope --regid gpuscope --clear-groups \
  /usr/bin/gpuscope serve --config /etc/gpuscope/gpuscope.yaml --simulate training-8xh100 \
  --address "127.0.0.1:$port" >/tmp/serve.log 2>&1 &
agent=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/metrics" >/tmp/metrics 2>/dev/null && break
  sleep 0.2
done
kill "$agent"; wait "$agent" || true
grep -q '^DCGM_FI_DEV_GPU_UTIL{' /tmp/metrics || fail "no /metrics: $(cat /tmp/serve.log)"
uuid=GPU-11111111-2222-3333-4444-555555555555
SLURM_JOB_ID=4242 CUDA_VISIBLE_DEVICES=$uuid SLURMD=/bin/false \
  /usr/lib/gpuscope/slurm/gpuscope-prolog
[ "$(cat "/run/gpuscope/jobs/$uuid")" = 4242 ] ||
  fail "the prolog mapped nothing: $(ls -la /run/gpuscope/jobs)"
SLURM_JOB_ID=4242 CUDA_VISIBLE_DEVICES=$uuid SLURMD=/bin/false GPUSCOPE_REPORT_TO=none \
  /usr/lib/gpuscope/slurm/gpuscope-epilog
if grep -qs 4242 "/run/gpuscope/jobs/$uuid"; then fail "the epilog left the job mapped"; fi
promtool check rules /usr/share/gpuscope/prometheus/rules/*.yml >/tmp/promtool 2>&1 ||
  fail "promtool check rules: $(cat /tmp/promtool)"
promtool check config /usr/share/gpuscope/prometheus/prometheus.yml >/tmp/promtool 2>&1 ||
  fail "promtool check config: $(cat /tmp/promtool)"
man -l /usr/share/man/man1/gpuscope.1.gz >/dev/null 2>&1 || fail "man -l gpuscope.1.gz"
echo "step 2 ok"

# 3. An upgrade under a running systemd, the site's change to a conffile in
# place: the conffile is kept, the agent restarted, not stopped by prerm.
echo "# changed by the site" >>/etc/gpuscope/gpuscope.yaml
mkdir -p /run/systemd/system
dpkg -i "$new" >/dev/null
grep -q '^# changed by the site$' /etc/gpuscope/gpuscope.yaml ||
  fail "the upgrade lost the site's conffile"
[ "$(dpkg-query -W -f '${Version}' gpuscope)" = "$(dpkg-deb -f "$new" Version)" ] ||
  fail "not upgraded"
grep -q '^deb-systemd-invoke restart gpuscope.service$' "$CALLS" ||
  fail "not restarted: $(cat "$CALLS")"
if grep -q '^deb-systemd-invoke stop' "$CALLS"; then fail "stopped on upgrade: $(cat "$CALLS")"; fi
echo "step 3 ok"

# 4. Purge: the user, the configuration, the job mapping and the unit's
# state go; nothing of gpuscope is left in /etc, /run or /var/lib.
dpkg --purge gpuscope >/dev/null
grep -q '^deb-systemd-invoke stop gpuscope.service$' "$CALLS" || fail "not stopped on remove"
if getent passwd gpuscope >/dev/null; then fail "the user is left"; fi
if getent group gpuscope >/dev/null; then fail "the group is left"; fi
left=$(find /etc /run /var/lib /usr/share/gpuscope /usr/lib/gpuscope -name '*gpuscope*' \
         2>/dev/null || true)
[ -z "$left" ] || fail "left after purge: $left"
echo "step 4 ok"
