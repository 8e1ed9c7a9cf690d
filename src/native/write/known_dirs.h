// SPDX-License-Identifier: MIT
// Directories an environment created or saw, so that mkdirAll starts below them.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace smartread {

// The prefixes of a path as node's recursive mkdir walks up them: each is the one before cut at
// its last '/' (so 'a//b/c' gives 'a//b/c', 'a//b', 'a/'), ending where no '/' is left or the
// prefix would be empty ('/a' ends at '/a': '/' always exists). A prefix that differs from the
// one before only by trailing slashes is left out ('a' after 'a/'): it names the same directory.
// Returned as lengths, the path itself first.
std::vector<size_t> MkdirPrefixes(std::string_view path);

// A bounded set of absolute directory paths, most recently used kept: the paths made or found
// by mkdirAll and the directories new levels were made in. Only a hint of where to
// start: every use is checked by the syscall it saves the walk up to (a mkdir below a directory
// removed since fails with ENOENT, and the entry is forgotten), so a stale entry costs a
// syscall, never a wrong result. Relative paths are never kept: they change meaning with the
// working directory. Shared by the JS thread and the pool's threads.
class KnownDirs {
 public:
  static constexpr size_t kCapacity = 8192;

  // Whether `path` is in the set; marks it used.
  bool Contains(std::string_view path);
  void Add(std::string_view path);
  void Forget(std::string_view path);
  static bool Keeps(std::string_view path) { return !path.empty() && path[0] == '/'; }

 private:
  std::mutex mutex_;
  // Most recently used first; the index's keys view the strings in these nodes, which never move.
  std::list<std::string> order_;
  std::unordered_map<std::string_view, std::list<std::string>::iterator> index_;
};

}  // namespace smartread
