# Sourced by the device scripts: set-up steps that each record how to undo themselves, so that
# a failure half-way, an interrupt or the normal end tears down exactly what was made.
# (bench/mounts.js does the same in JavaScript for the overlay and FUSE mounts.)
#
# Every step appends one line to $DEVICES_STATE/undo; devices_teardown runs them newest first.
# Targets for the bench are appended to $DEVICES_STATE/targets.tsv, one per line:
#   DIR <tab> LABEL <tab> EMULATED (0|1) <tab> READ_BPS <tab> READ_IOPS (0: unlimited)

devices_log() {
  printf 'devices: %s\n' "$*" >&2
}

devices_require_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "devices: this sets up block devices, mounts and cgroups, which needs root." >&2
    echo "devices: run it as root (e.g. sudo $0 ...); nothing was changed." >&2
    exit 1
  fi
}

devices_init() {
  DEVICES_STATE=$(mktemp -d /tmp/smartread-devices.XXXXXX)
  : >"$DEVICES_STATE/undo"
  : >"$DEVICES_STATE/targets.tsv"
  export DEVICES_STATE
}

devices_undo_later() {
  printf '%s\n' "$*" >>"$DEVICES_STATE/undo"
}

devices_add_target() {
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-0}" "${5:-0}" >>"$DEVICES_STATE/targets.tsv"
}

# Runs the undo lines newest first; each may fail (already gone) without stopping the others.
# They run in this shell, not in a pipeline's subshell: a subshell would still be a member of
# the throttling cgroup when the cgroup is removed.
devices_teardown() {
  [ -n "${DEVICES_STATE:-}" ] && [ -d "$DEVICES_STATE" ] || return 0
  local line lines
  mapfile -t lines <"$DEVICES_STATE/undo"
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    line=${lines[i]}
    devices_log "teardown: $line"
    eval "$line" || devices_log "teardown step failed (continuing): $line"
  done
  rm -rf "$DEVICES_STATE"
}

# ext4 on a block device, mounted on a new directory; prints the mount point. Mounted with
# discard, so that deleted files give their memory back to zram (and their space to /tmp under
# a loop image) while the bench writes and deletes its trial files.
devices_mount_ext4() {
  local dev=$1 name=$2 dir
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" >&2
  dir="$DEVICES_STATE/$name"
  mkdir "$dir"
  mount -t ext4 -o discard "$dev" "$dir"
  devices_undo_later "umount '$dir' && rmdir '$dir'"
  chmod 1777 "$dir"
  printf '%s\n' "$dir"
}

# A new zram device of $1 (e.g. 1G), hot-added so that devices others use are left alone;
# prints /dev/zramN, or nothing (and says why) when this kernel has no zram.
devices_zram() {
  local size=$1 id
  if [ ! -e /sys/class/zram-control/hot_add ]; then
    modprobe zram num_devices=0 2>/dev/null || true
  fi
  if [ ! -e /sys/class/zram-control/hot_add ]; then
    devices_log "zram: this kernel has no zram (no /sys/class/zram-control, and modprobe zram did not add it): skipped"
    return 0
  fi
  id=$(cat /sys/class/zram-control/hot_add)
  devices_undo_later "echo 1 > /sys/block/zram$id/reset; echo $id > /sys/class/zram-control/hot_remove"
  echo "$size" >"/sys/block/zram$id/disksize"
  printf '/dev/zram%s\n' "$id"
}

# A loop device over a new sparse image file of $1 in /tmp, with direct I/O so that a cold read
# of the loop device reaches the disk rather than the image file's own page cache; prints
# /dev/loopN.
devices_loop() {
  local size=$1 name=$2 image dev
  image=$(mktemp "/tmp/smartread-$name.XXXXXX.img")
  devices_undo_later "rm -f '$image'"
  truncate -s "$size" "$image"
  dev=$(losetup --find --show --direct-io=on "$image")
  devices_undo_later "losetup -d '$dev'"
  printf '%s\n' "$dev"
}

devices_major_minor() {
  printf '%d:%d\n' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"
}

# The block-io throttle, cgroup v2 io.max or v1 blkio, whichever this machine has: a new cgroup
# that this shell joins (its children inherit it), so that the bench's reads of the throttled
# devices are throttled and nothing else is. Sets DEVICES_CGROUP to the cgroup's directory and
# DEVICES_CGROUP_KIND to v2 or v1, or DEVICES_CGROUP to nothing (and says why) when neither
# controller is available. Not to be called in $(...): it sets variables.
devices_throttle_cgroup() {
  local v2 v1 cg
  DEVICES_CGROUP=""
  v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
  v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
  if [ -n "$v2" ] && grep -qw io "$v2/cgroup.controllers" 2>/dev/null; then
    # The io controller must be enabled in the parent's subtree_control; the v2 root may have
    # it enabled while holding processes, any other cgroup may not, so the new one is a child
    # of the root.
    grep -qw io "$v2/cgroup.subtree_control" || {
      echo +io >"$v2/cgroup.subtree_control"
      devices_undo_later "echo -io > '$v2/cgroup.subtree_control'"
    }
    cg="$v2/smartread-bench-$$"
    mkdir "$cg"
    devices_undo_later "rmdir '$cg'"
    DEVICES_CGROUP_KIND=v2
  elif [ -n "$v1" ]; then
    cg="$v1/smartread-bench-$$"
    mkdir "$cg"
    devices_undo_later "rmdir '$cg'"
    DEVICES_CGROUP_KIND=v1
  else
    devices_log "throttle: neither cgroup v2 with the io controller nor cgroup v1 blkio is mounted: emulated devices skipped"
    return 0
  fi
  DEVICES_CGROUP=$cg
}

# Limits reads of device $2 in cgroup $1 to $3 bytes/s and $4 requests/s.
devices_throttle_reads() {
  local cg=$1 majmin
  majmin=$(devices_major_minor "$2")
  if [ "$DEVICES_CGROUP_KIND" = v2 ]; then
    echo "$majmin rbps=$3 riops=$4" >"$cg/io.max"
  else
    echo "$majmin $3" >"$cg/blkio.throttle.read_bps_device"
    echo "$majmin $4" >"$cg/blkio.throttle.read_iops_device"
  fi
}

# Moves this shell (and so what it starts from now on) into cgroup $1; the undo moves it back
# to the cgroup it came from (in the same hierarchy), so that the new one is empty and can be
# removed.
devices_join_cgroup() {
  local cg=$1 mount from
  mount=$(dirname "$cg")
  if [ "$DEVICES_CGROUP_KIND" = v2 ]; then
    from=$(awk -F: '$1 == "0" { print $3; exit }' /proc/$$/cgroup)
  else
    from=$(awk -F: '$2 ~ /(^|,)blkio(,|$)/ { print $3; exit }' /proc/$$/cgroup)
  fi
  echo $$ >"$cg/cgroup.procs"
  devices_undo_later "echo $$ > '$mount${from%/}/cgroup.procs'"
}
