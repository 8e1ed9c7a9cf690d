// SPDX-License-Identifier: MIT
// Read targets as the engines take them from JS: a path (string or Buffer) or a user's fd.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "errors.h"

namespace smartread {

// A path argument (string or Buffer) as a NUL-terminated C string, without allocating for the
// common short path. Embedded NUL bytes are reported, as node:fs refuses them.
class PathArg {
 public:
  // False with `failure` set for NUL bytes, or with a pending exception for a non-path value.
  bool From(napi_env env, napi_value value, Failure* failure);
  const char* c_str() const { return heap_.empty() ? small_ : heap_.c_str(); }

 private:
  char small_[1024];
  std::string heap_;
};

// A read's target kept past the call, for the engines that finish it later: a path (the
// string's UTF-8, or a Buffer's bytes as they are) or, when fd >= 0, the user's fd.
struct ReadTarget {
  std::string path;
  int fd = -1;
};

ReadTarget ReadTargetFromJs(const Napi::Value& value);

// object[key] as a number (or, for BoolProperty, coerced to a boolean). False when it cannot be
// had: a getter threw, the value is not a number, or the environment is ending (a worker that
// exits or is terminated fails every call into JavaScript from then on). The caller must then
// return without using the value: node-addon-api's own getters answer a failure with an empty
// Napi::Value, and any use of that one is a fatal error that takes the whole process down.
bool NumberProperty(napi_env env, napi_value object, const char* key, double* out);
bool BoolProperty(napi_env env, napi_value object, const char* key, bool* out);

// What a method returns when such a read failed: a TypeError naming `what`, unless an exception is
// already pending (a getter's), or none can be thrown any more (the environment is ending).
Napi::Value BadArgument(napi_env env, const char* what);

// Whether info[index] is the boolean true. Read without coercion, which runs no JavaScript and so
// cannot fail while a worker ends; Napi::Value::ToBoolean() can, and then hands back an empty
// Napi::Boolean whose use is fatal (see NumberProperty).
bool ArgIsTrue(const Napi::CallbackInfo& info, size_t index);

// The bytes of a Buffer, TypedArray or DataView from its first byte; false if it is none.
bool ViewBytes(napi_env env, napi_value view, uint8_t** data, size_t* byte_length);

}  // namespace smartread
