#!/bin/sh
# Detects liburing for binding.gyp: `liburing.sh defines` prints HAVE_LIBURING=1 and
# `liburing.sh libs` prints the linker flags when pkg-config finds it, and nothing otherwise,
# so the addon builds without io_uring where the library is missing.
# SMARTREAD_NO_LIBURING=1 forces the build without it (CI proves that build this way).
# SMARTREAD_STATIC_LIBURING=1 links liburing.a into the addon instead of liburing.so, so that a
# prebuilt binary runs where liburing is not installed (npm run prebuild sets it); its symbols
# stay inside the addon. Asked for and missing, that is an error, not a quiet dynamic build.
if [ "${SMARTREAD_NO_LIBURING:-0}" = "1" ] || ! pkg-config --exists liburing 2>/dev/null; then
  if [ "${SMARTREAD_STATIC_LIBURING:-0}" = "1" ]; then
    echo "liburing.sh: SMARTREAD_STATIC_LIBURING=1 but pkg-config finds no liburing (apt-get install liburing-dev)" >&2
    exit 1
  fi
  exit 0
fi
case "$1" in
  defines) echo "HAVE_LIBURING=1" ;;
  libs)
    if [ "${SMARTREAD_STATIC_LIBURING:-0}" = "1" ]; then
      archive="$(pkg-config --variable=libdir liburing)/liburing.a"
      if [ ! -f "$archive" ]; then
        echo "liburing.sh: SMARTREAD_STATIC_LIBURING=1 but $archive does not exist" >&2
        exit 1
      fi
      echo "$archive -Wl,--exclude-libs,liburing.a"
    else
      pkg-config --libs liburing
    fi
    ;;
  *) echo "usage: liburing.sh defines|libs" >&2; exit 2 ;;
esac
