// SPDX-License-Identifier: MIT
// Directories an environment created or saw, so that mkdirAll starts below them.
#include "known_dirs.h"

namespace smartread {

std::vector<size_t> MkdirPrefixes(std::string_view path) {
  std::vector<size_t> ends;
  size_t end = path.size();
  while (end > 0) {
    // 'a/' and 'a' name one directory; node's walk up meets 'a/' first, and a walk down that
    // made 'a' first would name it differently.
    const bool same_as_last = !ends.empty() && path.substr(end, ends.back() - end).find_first_not_of('/') == std::string_view::npos;
    if (!same_as_last) ends.push_back(end);
    const size_t slash = path.substr(0, end).find_last_of('/');
    if (slash == std::string_view::npos) break;
    end = slash;
  }
  return ends;
}

bool KnownDirs::Contains(std::string_view path) {
  if (!Keeps(path)) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(path);
  if (it == index_.end()) return false;
  order_.splice(order_.begin(), order_, it->second);
  return true;
}

void KnownDirs::Add(std::string_view path) {
  if (!Keeps(path)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(path);
  if (it != index_.end()) {
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  order_.emplace_front(path);
  index_.emplace(std::string_view(order_.front()), order_.begin());
  if (order_.size() > kCapacity) {
    index_.erase(std::string_view(order_.back()));
    order_.pop_back();
  }
}

void KnownDirs::Forget(std::string_view path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(path);
  if (it == index_.end()) return;
  const auto node = it->second;
  index_.erase(it);
  order_.erase(node);
}

}  // namespace smartread
