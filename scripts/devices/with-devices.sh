#!/usr/bin/env bash
# Runs a command with more kinds of storage to benchmark than this machine has, then removes
# them all, however the command ends:
#   - zram ext4: ext4 on a zram device (a block device in RAM, compressed; our files are not
#     compressible, so it is a fast RAM disk);
#   - loop ext4: ext4 on a loop device over a sparse image in /tmp, with direct I/O (cold reads
#     go through the loop driver to the disk under /tmp);
#   - emulated SATA SSD and emulated HDD: ext4 on a device of their own (zram, or a loop device
#     where there is no zram) whose reads are throttled by the kernel's block-io controller
#     (cgroup v2 io.max, or v1 blkio where the machine has that): the SSD at 550 MB/s and
#     90,000 requests/s, the HDD at 150 MB/s and 150 requests/s, with 1 MiB readahead so that
#     its sequential reads can reach the bandwidth. This shell joins the throttling cgroup, so
#     the command's reads of those two devices are throttled, and no other I/O is. Only reads
#     are limited: writing the files is not slowed. Throttling emulates bandwidth and request
#     rate, not an HDD's seek pattern: a read costs the same wherever it lands.
# The command gets SMARTREAD_BENCH_DEVICES: a file listing the targets, one per line,
# DIR <tab> LABEL <tab> EMULATED (0|1) <tab> READ_BPS <tab> READ_IOPS.
#
#   sudo scripts/devices/with-devices.sh node bench/index.js --dir /tmp ...
#   (npm run bench -- --devices does this for you)
#
# Root only. What this kernel lacks (zram, a block-io controller) is said and skipped.
#
# The filesystems that refuse non-blocking reads (overlayfs, FUSE: bindfs and the bench's
# fuse-latency daemon) are not set up here but by the bench itself, in bench/mounts.js, which
# the tests share (npm run bench -- --mounts; --devices --mounts for both): a FUSE daemon must be
# compiled and checked first, and a test file mounts them for itself. They follow this script's
# way: each step records its undo, and the undo runs newest first however the run ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi
devices_require_root
for tool in mkfs.ext4 losetup mount umount truncate stat; do
  command -v "$tool" >/dev/null || { echo "devices: $tool is missing" >&2; exit 1; }
done

devices_init
trap 'status=$?; trap - EXIT; devices_teardown; exit $status' EXIT
# Until the command runs, a signal ends the set-up (and the EXIT trap undoes it).
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

DEVICE_SIZE=1G

dev=$(devices_zram "$DEVICE_SIZE")
if [ -n "$dev" ]; then
  dir=$(devices_mount_ext4 "$dev" zram)
  devices_add_target "$dir" "zram ext4" 0
  devices_log "zram ext4 on $dev at $dir"
fi

dev=$(devices_loop "$DEVICE_SIZE" loop)
dir=$(devices_mount_ext4 "$dev" loop)
devices_add_target "$dir" "loop ext4" 0
devices_log "loop ext4 on $dev (direct I/O) at $dir"

devices_throttle_cgroup
cg=$DEVICES_CGROUP
if [ -n "$cg" ]; then
  # name, label, bytes/s, requests/s, readahead KiB
  for profile in "ssd|SATA SSD|550000000|90000|128" "hdd|HDD|150000000|150|1024"; do
    IFS='|' read -r name label bps iops readahead <<<"$profile"
    dev=$(devices_zram "$DEVICE_SIZE")
    base="zram"
    if [ -z "$dev" ]; then
      dev=$(devices_loop "$DEVICE_SIZE" "$name")
      base="loop (direct I/O)"
    fi
    dir=$(devices_mount_ext4 "$dev" "$name")
    echo "$readahead" >"/sys/block/$(basename "$dev")/queue/read_ahead_kb"
    devices_throttle_reads "$cg" "$dev" "$bps" "$iops"
    devices_add_target "$dir" "$label on $base, reads throttled to $((bps / 1000000)) MB/s and $iops IOPS ($DEVICES_CGROUP_KIND)" 1 "$bps" "$iops"
    devices_log "emulated $label on $dev at $dir: reads at most $bps B/s, $iops requests/s (cgroup $DEVICES_CGROUP_KIND $cg)"
  done
  devices_join_cgroup "$cg"
fi

# The command runs in the background so that a signal reaches this shell at once (a foreground
# command would delay the traps until it ended): it is passed on as SIGTERM (a background
# command of a non-interactive shell ignores SIGINT), and the devices go once the command has
# ended.
SMARTREAD_BENCH_DEVICES="$DEVICES_STATE/targets.tsv" "$@" &
child=$!
for signal in INT TERM HUP; do
  trap "kill -TERM $child 2>/dev/null || true" "$signal"
done
while :; do
  status=0
  wait "$child" || status=$?
  kill -0 "$child" 2>/dev/null || break
done
exit "$status"
