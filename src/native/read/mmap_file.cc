// SPDX-License-Identifier: MIT
// The mmap engine: a Buffer over a private mapping of a file, unmapped by its finalizer or close.
#include "mmap_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "../common/args.h"
#include "../common/dest_buffer.h"
#include "../common/errors.h"

namespace smartread {

namespace {

// Marks the handles mapFile makes, so that unmap() takes no other external for one.
constexpr napi_type_tag kMappingTag = {0x736d617274726561ULL, 0x646d617070696e67ULL};

// Status napi_no_external_buffers_allowed (Node >= 20.3); a number so that older headers build.
constexpr int kNoExternalBuffersAllowed = 22;

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older headers lack it, older kernels say EINVAL
#endif

// In the order of the TypeScript advice names.
constexpr int kAdvice[] = {MADV_NORMAL, MADV_SEQUENTIAL, MADV_RANDOM, MADV_WILLNEED, MADV_HUGEPAGE};

// Test-only: behave as a runtime that forbids external buffers, so that the copy fallback can be
// tested on one that allows them.
bool ExternalBuffersForbiddenForTests() {
  static const bool forbidden = [] {
    const char* value = getenv("SMARTREAD_TEST_NO_EXTERNAL");
    return value != nullptr && strcmp(value, "1") == 0;
  }();
  return forbidden;
}

// One mapping, owned by two holders that both run on the JS thread: the Buffer's finalizer and
// the External that close() is handed. Whichever lets go last frees it; `unmapped` makes sure
// that only one of close() and the finalizer unmaps.
struct Mapping {
  void* base = nullptr;
  size_t length = 0;
  bool unmapped = false;
  int holders = 2;

  void Unmap(napi_env env) {
    if (unmapped) return;
    unmapped = true;
    munmap(base, length);
    int64_t ignored;
    napi_adjust_external_memory(env, -static_cast<int64_t>(length), &ignored);
  }
  void Release() {
    if (--holders == 0) delete this;
  }
};

void FinalizeBuffer(napi_env env, void*, void* hint) {
  Mapping* mapping = static_cast<Mapping*>(hint);
  mapping->Unmap(env);
  mapping->Release();
}

void FinalizeHandle(napi_env, void* data, void*) { static_cast<Mapping*>(data)->Release(); }

napi_value EmptyResult(napi_env env) {
  napi_value out, buffer;
  napi_create_object(env, &out);
  void* data;
  napi_create_buffer(env, 0, &data, &buffer);
  napi_set_named_property(env, out, "buffer", buffer);
  return out;
}

}  // namespace

Napi::Value MapFile(const Napi::CallbackInfo& info, Instance& instance) {
  napi_env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(info.Env(), failure);
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const uint64_t offset = static_cast<uint64_t>(info[2].As<Napi::Number>().Int64Value());
  const int64_t wanted = info[3].As<Napi::Number>().Int64Value();
  const uint32_t advice = info[4].As<Napi::Number>().Uint32Value();
  const bool populate = info[5].As<Napi::Boolean>().Value();

  const int fd = open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return FailureToJs(info.Env(), Failure::Errno(errno, Syscall::kOpen));
  struct stat st;
  if (fstat(fd, &st) < 0) {
    failure = Failure::Errno(errno, Syscall::kFstat);
    close(fd);
    return FailureToJs(info.Env(), failure);
  }
  if (!S_ISREG(st.st_mode)) {
    // mmap would map /dev/zero as anonymous memory, and fail on the rest with ENODEV: only
    // regular files are mapped, and a directory is called one.
    close(fd);
    return FailureToJs(info.Env(), Failure::Errno(S_ISDIR(st.st_mode) ? EISDIR : ENODEV, Syscall::kMmap));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t length = wanted < 0 ? (offset <= size ? size - offset : 0) : static_cast<uint64_t>(wanted);
  // A page past the end of the file would raise SIGBUS when touched: never map one.
  if (offset > size || length > size - offset) {
    close(fd);
    return FailureToJs(info.Env(), Failure::Window(size));
  }
  if (length > instance.max_length) {
    close(fd);
    return FailureToJs(info.Env(), Failure::TooLarge(length));
  }
  if (length == 0) {
    close(fd);
    return Napi::Value(env, EmptyResult(env));
  }
  // mmap takes page-aligned offsets: map from the page the window starts in.
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t start = offset - offset % page;
  const size_t map_length = static_cast<size_t>(offset - start + length);
  void* base = mmap(nullptr, map_length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                    static_cast<off_t>(start));
  const int map_errno = errno;
  // The mapping holds its own reference to the file.
  close(fd);
  if (base == MAP_FAILED) return FailureToJs(info.Env(), Failure::Errno(map_errno, Syscall::kMmap));
  // Advice and population are hints: a kernel that refuses one (EINVAL for an unknown advice,
  // MADV_POPULATE_READ before 5.14) still leaves a working mapping.
  if (advice < sizeof kAdvice / sizeof kAdvice[0] && kAdvice[advice] != MADV_NORMAL) {
    madvise(base, map_length, kAdvice[advice]);
  }
  // Not MAP_POPULATE: on a private writable mapping it write-faults every page, which copies the
  // whole file into anonymous memory. MADV_POPULATE_READ maps the page-cache pages themselves.
  if (populate) madvise(base, map_length, MADV_POPULATE_READ);
  uint8_t* data = static_cast<uint8_t*>(base) + (offset - start);

  napi_value out, buffer;
  napi_create_object(env, &out);
  Mapping* mapping = new Mapping{base, map_length};
  napi_status status = ExternalBuffersForbiddenForTests()
      ? static_cast<napi_status>(kNoExternalBuffersAllowed)
      : napi_create_external_buffer(env, static_cast<size_t>(length), data, FinalizeBuffer, mapping, &buffer);
  if (status != napi_ok) {
    delete mapping;
    const bool copied = static_cast<int>(status) == kNoExternalBuffersAllowed &&
                        CopyToBuffer(env, data, static_cast<size_t>(length), &buffer);
    munmap(base, map_length);
    if (!copied) return Napi::Value(env, nullptr);
    napi_set_named_property(env, out, "buffer", buffer);
    return Napi::Value(env, out);
  }
  // V8 does not count the mapping: without this, dropped mappings would be collected late and
  // address space and page-table memory would pile up.
  int64_t ignored;
  napi_adjust_external_memory(env, static_cast<int64_t>(map_length), &ignored);
  napi_value handle;
  if (napi_create_external(env, mapping, FinalizeHandle, nullptr, &handle) != napi_ok) {
    // The Buffer exists and will unmap; the handle's share of the mapping is dropped here.
    mapping->Release();
    return Napi::Value(env, nullptr);
  }
  // Without its mark the handle is one unmap() refuses; the Buffer still unmaps when collected.
  napi_type_tag_object(env, handle, &kMappingTag);
  napi_set_named_property(env, out, "buffer", buffer);
  napi_set_named_property(env, out, "mapping", handle);
  return Napi::Value(env, out);
}

Napi::Value Unmap(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  void* data = nullptr;
  bool tagged = false;
  napi_valuetype type;
  // Only a mapFile handle: another external (a readMany run's) is not a Mapping. The type is
  // looked at first: the tag's check would throw for undefined or null.
  if (info.Length() < 1 || napi_typeof(env, info[0], &type) != napi_ok || type != napi_external ||
      napi_check_object_type_tag(env, info[0], &kMappingTag, &tagged) != napi_ok || !tagged ||
      napi_get_value_external(env, info[0], &data) != napi_ok) {
    return Napi::Boolean::New(env, false);
  }
  Mapping* mapping = static_cast<Mapping*>(data);
  if (mapping == nullptr || mapping->unmapped) return Napi::Boolean::New(env, false);
  napi_value array_buffer;
  if (napi_get_typedarray_info(env, info[1], nullptr, nullptr, nullptr, &array_buffer, nullptr) != napi_ok ||
      napi_detach_arraybuffer(env, array_buffer) != napi_ok) {
    // Still reachable from JS: unmapping now would leave it pointing at nothing.
    return Napi::Value(env, nullptr);
  }
  mapping->Unmap(env);
  return Napi::Boolean::New(env, true);
}

}  // namespace smartread
