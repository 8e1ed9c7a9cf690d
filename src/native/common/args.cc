// SPDX-License-Identifier: MIT
// Read targets as the engines take them from JS: a path (string or Buffer) or a user's fd.
#include "args.h"

#include <cstring>

namespace smartread {

bool PathArg::From(napi_env env, napi_value value, Failure* failure) {
  napi_valuetype type;
  napi_typeof(env, value, &type);
  size_t length = 0;
  if (type == napi_string) {
    // napi_get_value_string_utf8 truncates at a character boundary, so a result within 4 bytes
    // of the end may have been cut: then ask for the exact length and use the heap.
    napi_get_value_string_utf8(env, value, small_, sizeof small_, &length);
    if (length + 4 >= sizeof small_) {
      napi_get_value_string_utf8(env, value, nullptr, 0, &length);
      heap_.resize(length + 1);
      napi_get_value_string_utf8(env, value, heap_.data(), length + 1, &length);
      heap_.resize(length);
    }
  } else {
    bool is_buffer = false;
    napi_is_buffer(env, value, &is_buffer);
    void* data = nullptr;
    if (!is_buffer || napi_get_buffer_info(env, value, &data, &length) != napi_ok) {
      napi_throw_type_error(env, nullptr, "path must be a string or a Buffer");
      *failure = Failure::JsException();
      return false;
    }
    if (length < sizeof small_) {
      // An empty Buffer may have no data pointer at all, and memcpy from nullptr is undefined
      // even for 0 bytes (UBSan reports it).
      if (length > 0) memcpy(small_, data, length);
      small_[length] = '\0';
    } else {
      heap_.assign(static_cast<const char*>(data), length);
    }
  }
  if (strlen(c_str()) != length) {
    *failure = Failure::NullBytes();
    return false;
  }
  return true;
}

bool NumberProperty(napi_env env, napi_value object, const char* key, double* out) {
  napi_value value;
  return napi_get_named_property(env, object, key, &value) == napi_ok &&
         napi_get_value_double(env, value, out) == napi_ok;
}

bool BoolProperty(napi_env env, napi_value object, const char* key, bool* out) {
  napi_value value;
  napi_value coerced;
  return napi_get_named_property(env, object, key, &value) == napi_ok &&
         napi_coerce_to_bool(env, value, &coerced) == napi_ok && napi_get_value_bool(env, coerced, out) == napi_ok;
}

Napi::Value BadArgument(napi_env env, const char* what) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && !pending) napi_throw_type_error(env, nullptr, what);
  return Napi::Value();
}

bool ArgIsTrue(const Napi::CallbackInfo& info, size_t index) {
  bool value = false;
  return info.Length() > index && napi_get_value_bool(info.Env(), info[index], &value) == napi_ok && value;
}

ReadTarget ReadTargetFromJs(const Napi::Value& value) {
  ReadTarget target;
  if (value.IsNumber()) {
    target.fd = value.As<Napi::Number>().Int32Value();
  } else if (value.IsString()) {
    target.path = value.As<Napi::String>().Utf8Value();
  } else {
    Napi::Buffer<char> bytes = value.As<Napi::Buffer<char>>();
    target.path.assign(bytes.Data(), bytes.Length());
  }
  return target;
}

bool ViewBytes(napi_env env, napi_value view, uint8_t** data, size_t* byte_length) {
  bool is = false;
  void* bytes = nullptr;
  if (napi_is_typedarray(env, view, &is) == napi_ok && is) {
    napi_typedarray_type type;
    size_t length;
    if (napi_get_typedarray_info(env, view, &type, &length, &bytes, nullptr, nullptr) != napi_ok) return false;
    static constexpr size_t kElementSize[] = {1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8};
    *data = static_cast<uint8_t*>(bytes);
    *byte_length = length * kElementSize[type];
    return true;
  }
  if (napi_is_dataview(env, view, &is) == napi_ok && is) {
    if (napi_get_dataview_info(env, view, byte_length, &bytes, nullptr, nullptr) != napi_ok) return false;
    *data = static_cast<uint8_t*>(bytes);
    return true;
  }
  return false;
}

}  // namespace smartread
