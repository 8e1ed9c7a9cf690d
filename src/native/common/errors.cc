// SPDX-License-Identifier: MIT
// Converts a Failure into the plain object the TypeScript error builder reads.
#include "errors.h"

namespace smartread {

const char* SyscallName(Syscall call) {
  switch (call) {
    case Syscall::kOpen: return "open";
    case Syscall::kFstat: return "fstat";
    case Syscall::kRead: return "read";
    case Syscall::kClose: return "close";
    case Syscall::kMmap: return "mmap";
    case Syscall::kFadvise: return "fadvise";
    case Syscall::kStat: return "stat";
    case Syscall::kWrite: return "write";
    case Syscall::kFsync: return "fsync";
    case Syscall::kMkdir: return "mkdir";
    case Syscall::kRename: return "rename";
    case Syscall::kNone: break;
  }
  return "";
}

namespace {

// Raw N-API, not node-addon-api: while a worker is being terminated, setting a property fails,
// and node-addon-api would turn that failure into a fatal error that takes the process down.
// Here a failure only leaves the object short; no JS will look at it.
void SetNumber(napi_env env, napi_value object, const char* key, double number) {
  napi_value value;
  if (napi_create_double(env, number, &value) == napi_ok) {
    napi_set_named_property(env, object, key, value);
  }
}

void SetString(napi_env env, napi_value object, const char* key, const char* text) {
  napi_value value;
  if (napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &value) == napi_ok) {
    napi_set_named_property(env, object, key, value);
  }
}

}  // namespace

Napi::Value FailureToJs(Napi::Env env, const Failure& failure) {
  napi_value out = nullptr;
  if (failure.kind == Failure::Kind::kJsException) return Napi::Value(env, out);
  if (napi_create_object(env, &out) != napi_ok) return Napi::Value(env, nullptr);
  switch (failure.kind) {
    case Failure::Kind::kErrno:
      SetNumber(env, out, "errno", -failure.errnum);
      SetString(env, out, "syscall", SyscallName(failure.syscall));
      break;
    case Failure::Kind::kNullBytes:
      SetNumber(env, out, "errno", 0);
      SetString(env, out, "reason", "null-bytes");
      break;
    case Failure::Kind::kTooLarge:
      SetNumber(env, out, "errno", 0);
      SetString(env, out, "reason", "too-large");
      SetNumber(env, out, "size", static_cast<double>(failure.size));
      break;
    case Failure::Kind::kWindow:
      SetNumber(env, out, "errno", 0);
      SetString(env, out, "reason", "window");
      SetNumber(env, out, "size", static_cast<double>(failure.size));
      break;
    case Failure::Kind::kNone:
    case Failure::Kind::kJsException:
      break;
  }
  return Napi::Value(env, out);
}

}  // namespace smartread
