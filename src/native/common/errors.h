// SPDX-License-Identifier: MIT
// A failed syscall as data: {errno, syscall}. The TypeScript layer turns it into a node:fs Error.
#pragma once

#include <napi.h>

#include <cstdint>

namespace smartread {

enum class Syscall : uint8_t {
  kNone, kOpen, kFstat, kRead, kClose, kMmap, kFadvise, kStat,
  kWrite, kFsync, kMkdir, kRename,
};

// Why a read did not produce bytes. errnum is a positive errno, or 0 for the non-errno reasons.
struct Failure {
  enum class Kind : uint8_t { kNone, kErrno, kNullBytes, kTooLarge, kWindow, kJsException };
  Kind kind = Kind::kNone;
  int errnum = 0;
  Syscall syscall = Syscall::kNone;
  uint64_t size = 0;  // the offending size for kTooLarge; the file's size for kWindow

  static Failure Errno(int err, Syscall call) { return {Kind::kErrno, err, call, 0}; }
  static Failure NullBytes() { return {Kind::kNullBytes, 0, Syscall::kNone, 0}; }
  static Failure TooLarge(uint64_t size) { return {Kind::kTooLarge, 0, Syscall::kNone, size}; }
  // A window (offset, length) that reaches past the end of a file of `size` bytes.
  static Failure Window(uint64_t size) { return {Kind::kWindow, 0, Syscall::kNone, size}; }
  // A JS exception is pending (allocation failed); the caller returns to JS at once.
  static Failure JsException() { return {Kind::kJsException, 0, Syscall::kNone, 0}; }
  bool failed() const { return kind != Kind::kNone; }
};

const char* SyscallName(Syscall call);

// {errno: -E, syscall} for an errno failure (negative, as libuv and node:fs report it);
// {errno: 0, reason: 'null-bytes' | 'too-large' | 'window', size} for the others.
// Returns an empty value for kJsException, leaving the pending exception to propagate.
Napi::Value FailureToJs(Napi::Env env, const Failure& failure);

}  // namespace smartread
