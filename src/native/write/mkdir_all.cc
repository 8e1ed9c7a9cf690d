// SPDX-License-Identifier: MIT
// mkdir -p on the calling thread, with node's results and errors, in fewer syscalls.
#include "mkdir_all.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <vector>

#include "../common/args.h"
#include "../common/errors.h"
#include "write_file.h"

namespace smartread {

int DirSyscalls::Mkdir(const std::string& path, mode_t mode) const {
  if (!confinement_.confined()) return mkdir(path.c_str(), mode) == 0 ? 0 : errno;
  // The parent is resolved beneath the root, then the last part is made in it: mkdirat's own
  // resolution of a whole path would follow a symbolic link out of the root. O_PATH without
  // O_DIRECTORY: mkdirat says ENOTDIR for a parent that is not a directory.
  size_t end = path.size();
  while (end > 1 && path[end - 1] == '/') end--;
  const size_t slash = path.find_last_of('/', end - 1);
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1, end - (slash == std::string::npos ? 0 : slash + 1));
  if (path.empty()) return ENOENT;
  const int dirfd = OpenForRead(parent.c_str(), O_PATH, confinement_);
  if (dirfd < 0) return errno;
  const int err = mkdirat(dirfd, name.c_str(), mode) == 0 ? 0 : errno;
  close(dirfd);
  return err;
}

int DirSyscalls::Stat(const std::string& path, bool* is_dir) const {
  struct stat st;
  if (!confinement_.confined()) {
    if (stat(path.c_str(), &st) != 0) return errno;
  } else {
    const int fd = OpenForRead(path.c_str(), O_PATH, confinement_);
    if (fd < 0) return errno;
    const int rc = fstat(fd, &st);
    const int err = errno;
    close(fd);
    if (rc != 0) return err;
  }
  *is_dir = S_ISDIR(st.st_mode);
  return 0;
}

namespace {

// One walk: node's, or, with `known`, starting below the deepest known ancestor. Returns 0 or the
// errno, with *failed_length the length of the level it failed at.
int Walk(const std::string& path, mode_t mode, KnownDirs* known, const DirSyscalls& syscalls, bool async_errors,
         int64_t* first_length, int64_t* failed_length) {
  *first_length = -1;
  *failed_length = static_cast<int64_t>(path.size());
  // Node's mkdir('') fails with ENOENT, and so does its stat.
  if (path.empty()) return ENOENT;
  if (known != nullptr && known->Contains(path)) {
    bool is_dir = false;
    if (syscalls.Stat(path, &is_dir) == 0 && is_dir) return 0;
    known->Forget(path);
  }
  const std::vector<size_t> levels = MkdirPrefixes(path);
  // The level a syscall names, in one buffer reused for every level.
  std::string current;
  current.reserve(path.size());
  // Node's walk: a stack of levels to make, the next on top. It starts with the path itself and
  // pushes the parent on ENOENT; below a known ancestor, every level under it is pushed at once,
  // the shallowest on top.
  std::vector<size_t> stack{0};
  size_t assumed = levels.size();
  if (known != nullptr) {
    for (size_t i = 1; i < levels.size(); i++) {
      if (!known->Contains(std::string_view(path.data(), levels[i]))) continue;
      for (size_t j = 1; j < i; j++) stack.push_back(j);
      assumed = i;
      break;
    }
  }
  // The level most recently found to be a directory by a stat: ENOENT below it means the walk
  // cannot get further (node would go round forever).
  size_t stat_confirmed = levels.size();
  size_t budget = 4 * levels.size() + 8;
  while (!stack.empty()) {
    const size_t level = stack.back();
    stack.pop_back();
    *failed_length = static_cast<int64_t>(levels[level]);
    if (budget-- == 0) return ENOENT;
    current.assign(path, 0, levels[level]);
    int err = syscalls.Mkdir(current, mode);
    if (err == 0) {
      if (*first_length < 0) {
        *first_length = static_cast<int64_t>(levels[level]);
        // The directory the new levels hang from: the next walk in this part of the tree starts
        // right below it. (Not every level made: a tree of many new branches would push the
        // useful entries out of the set.)
        if (known != nullptr && level + 1 < levels.size()) known->Add(std::string_view(path.data(), levels[level + 1]));
      }
      continue;
    }
    if (err == ENOENT && level + 1 < levels.size() && level + 1 != stat_confirmed) {
      if (assumed == level + 1) {
        known->Forget(std::string_view(path.data(), levels[assumed]));
        assumed = levels.size();
      }
      stack.push_back(level);
      stack.push_back(level + 1);
      continue;
    }
    if (err == EACCES || err == ENOSPC || err == ENOTDIR || err == EPERM) return err;
    if (err == ENOENT) {
      // The top level, or below a directory: node's mkdir then stats, as for EEXIST.
      if (level + 1 == stat_confirmed || !stack.empty()) return ENOENT;
      err = EEXIST;
    }
    // EEXIST and the rest: node looks at what is there.
    const int original = err;
    bool is_dir = false;
    err = syscalls.Stat(current, &is_dir);
    const bool above = original == EEXIST && !stack.empty();
    // Node's asynchronous walk says ENOTDIR for a level above the path that it cannot stat.
    if (err != 0) return async_errors && above ? ENOTDIR : err;
    if (!is_dir) return above ? ENOTDIR : EEXIST;
    // ...and ends, successfully, at a directory that gave another error than EEXIST.
    if (async_errors && original != EEXIST) break;
    stat_confirmed = level;
  }
  // The path is a directory now: asked for again, or below, it starts from here.
  if (known != nullptr) known->Add(path);
  return 0;
}

}  // namespace

int MkdirAll(const std::string& path, mode_t mode, KnownDirs* known, const DirSyscalls& syscalls,
             bool async_errors, int64_t* first_length, int64_t* failed_length) {
  if (known != nullptr && !KnownDirs::Keeps(path)) known = nullptr;
  const int err = Walk(path, mode, known, syscalls, async_errors, first_length, failed_length);
  // A walk from what is known that failed after making levels failed where node's would have:
  // those levels were missing, so node's walk would have gone up through them (ENOENT), made
  // them on the way down, and met the same error at the same level. One that made nothing may
  // have failed higher up than node's, which starts at the path itself (a component too long,
  // or one it may not search, fails node's first mkdir already): on the tree as it was, since
  // nothing changed, node's own walk gives node's error.
  if (err == 0 || known == nullptr || *first_length >= 0) return err;
  return Walk(path, mode, nullptr, syscalls, async_errors, first_length, failed_length);
}

napi_value MkdirFailureToJs(napi_env env, int err, int64_t failed_length) {
  napi_value out = FailureToJs(Napi::Env(env), Failure::Errno(err, Syscall::kMkdir));
  napi_value at;
  if (out != nullptr && napi_create_double(env, static_cast<double>(failed_length), &at) == napi_ok) {
    napi_set_named_property(env, out, "at", at);
  }
  return out;
}

Napi::Value MkdirAllSync(const Napi::CallbackInfo& info, const std::shared_ptr<KnownDirs>& known) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  const mode_t mode = static_cast<mode_t>(info[1].As<Napi::Number>().Uint32Value());
  const bool async_errors = BoolArg(info.Env(), info[2]);
  const Confinement confinement = ConfinementFromJs(info, 3);
  int64_t first = -1;
  int64_t failed = -1;
  const int err = MkdirAll(path.c_str(), mode, confinement.confined() ? nullptr : known.get(),
                           DirSyscalls(confinement), async_errors, &first, &failed);
  if (err != 0) return Napi::Value(env, MkdirFailureToJs(env, err, failed));
  return Napi::Number::New(env, static_cast<double>(first));
}

namespace {

// Calls `each(index, path)` for every string or Buffer of the array; false when an element is
// neither (a pending exception) or holds a NUL byte (skipped: it names no directory).
template <typename Each>
bool ForEachPath(napi_env env, napi_value array, Each each) {
  uint32_t length = 0;
  if (napi_get_array_length(env, array, &length) != napi_ok) return false;
  for (uint32_t i = 0; i < length; i++) {
    napi_value element;
    if (napi_get_element(env, array, i, &element) != napi_ok) return false;
    Failure failure;
    PathArg path;
    if (!path.From(env, element, &failure)) {
      if (failure.kind == Failure::Kind::kJsException) return false;
      continue;
    }
    each(i, path.c_str());
  }
  return true;
}

}  // namespace

Napi::Value DirsKnown(const Napi::CallbackInfo& info, KnownDirs& known) {
  napi_env env = info.Env();
  uint8_t* out = nullptr;
  size_t length = 0;
  if (!ViewBytes(env, info[1], &out, &length)) return Napi::Value();
  ForEachPath(env, info[0], [&](uint32_t i, const char* path) {
    if (i < length) out[i] = known.Contains(path) ? 1 : 0;
  });
  return Napi::Value();
}

Napi::Value ForgetDirs(const Napi::CallbackInfo& info, KnownDirs& known) {
  ForEachPath(info.Env(), info[0], [&](uint32_t, const char* path) { known.Forget(path); });
  return Napi::Value();
}

}  // namespace smartread
