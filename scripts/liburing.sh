#!/bin/sh
# Detects liburing for binding.gyp: `liburing.sh defines` prints HAVE_LIBURING=1 and
# `liburing.sh libs` prints the linker flags when pkg-config finds it, and nothing otherwise,
# so the addon builds without io_uring where the library is missing.
# SMARTREAD_NO_LIBURING=1 forces the build without it (CI proves that build this way).
if [ "${SMARTREAD_NO_LIBURING:-0}" = "1" ] || ! pkg-config --exists liburing 2>/dev/null; then
  exit 0
fi
case "$1" in
  defines) echo "HAVE_LIBURING=1" ;;
  libs) pkg-config --libs liburing ;;
  *) echo "usage: liburing.sh defines|libs" >&2; exit 2 ;;
esac
