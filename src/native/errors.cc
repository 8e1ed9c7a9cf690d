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
    case Syscall::kNone: break;
  }
  return "";
}

Napi::Value FailureToJs(Napi::Env env, const Failure& failure) {
  if (failure.kind == Failure::Kind::kJsException) return Napi::Value();
  Napi::Object out = Napi::Object::New(env);
  switch (failure.kind) {
    case Failure::Kind::kErrno:
      out.Set("errno", Napi::Number::New(env, -failure.errnum));
      out.Set("syscall", Napi::String::New(env, SyscallName(failure.syscall)));
      break;
    case Failure::Kind::kNullBytes:
      out.Set("errno", Napi::Number::New(env, 0));
      out.Set("reason", Napi::String::New(env, "null-bytes"));
      break;
    case Failure::Kind::kTooLarge:
      out.Set("errno", Napi::Number::New(env, 0));
      out.Set("reason", Napi::String::New(env, "too-large"));
      out.Set("size", Napi::Number::New(env, static_cast<double>(failure.size)));
      break;
    case Failure::Kind::kNone:
    case Failure::Kind::kJsException:
      break;
  }
  return out;
}

}  // namespace smartread
