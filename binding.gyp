{
  "variables": {
    "smartread_sanitize%": "<!(node -p \"process.env.SMARTREAD_SANITIZE === '1' ? 1 : 0\")"
  },
  "targets": [
    {
      "target_name": "smartread",
      "sources": [
        "src/native/addon.cc",
        "src/native/common/args.cc",
        "src/native/common/block_pool.cc",
        "src/native/common/dest_buffer.cc",
        "src/native/common/errors.cc",
        "src/native/common/file_io.cc",
        "src/native/common/pool_job.cc",
        "src/native/read/beneath.cc",
        "src/native/read/blind_reads.cc",
        "src/native/read/cached_read.cc",
        "src/native/read/cached_run.cc",
        "src/native/read/mmap_file.cc",
        "src/native/read/mount_table.cc",
        "src/native/read/page_cache.cc",
        "src/native/read/prefetch.cc",
        "src/native/read/read_into.cc",
        "src/native/read/sync_read.cc",
        "src/native/read/threadpool_read.cc",
        "src/native/write/known_dirs.cc",
        "src/native/write/mkdir_all.cc",
        "src/native/write/threadpool_write.cc",
        "src/native/write/write_file.cc",
        "src/native/uring/beneath_op.cc",
        "src/native/uring/positional_read.cc",
        "src/native/uring/read_file.cc",
        "src/native/uring/cached_batch.cc",
        "src/native/uring/ring.cc",
        "src/native/uring/mkdir_many.cc",
        "src/native/uring/write_many.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "<!@(sh scripts/liburing.sh defines)"
      ],
      "libraries": [
        "<!@(sh scripts/liburing.sh libs)"
      ],
      "cflags!": ["-fno-exceptions", "-O2", "-O0"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-O2", "-O0"],
      "cflags": ["-O3", "-fvisibility=hidden"],
      "cflags_cc": ["-O3", "-std=c++17", "-fvisibility=hidden", "-fvisibility-inlines-hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      # -z nodelete: Node unloads an addon with the last environment that loaded it (a worker's,
      # where the main thread never required it), and the block pool's unmapping thread, which
      # lives as long as the process, would then return into unmapped code (SIGSEGV).
      "ldflags": ["-Wl,--as-needed", "-Wl,-z,nodelete"],
      "conditions": [
        ["smartread_sanitize==1", {
          "cflags": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"],
          "cflags_cc": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ]
    }
  ]
}
