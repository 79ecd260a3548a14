#include "core/test_point.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace infercost {

namespace {

// One "NAME" or "NAME:N" of a variable's comma-separated list.
struct Spec {
  std::string name;
  long hit = 1;
  bool done = false;
};

std::vector<Spec> parse(const std::string& value) {
  std::vector<Spec> specs;
  size_t from = 0;
  while (from <= value.size()) {
    const size_t comma = std::min(value.find(',', from), value.size());
    const std::string item = value.substr(from, comma - from);
    const size_t colon = item.find(':');
    Spec s;
    s.name = item.substr(0, colon);
    if (colon != std::string::npos) s.hit = std::max(1L, std::strtol(item.c_str() + colon + 1, nullptr, 10));
    if (!s.name.empty()) specs.push_back(std::move(s));
    from = comma + 1;
  }
  return specs;
}

// What one variable asks for, and the hits of each point since it was set to that.
struct Armed {
  std::string key;  // the variable's value (and the FIFO's path): a new value counts from 0
  std::vector<Spec> specs;
  std::map<std::string, long> seen;
};

std::mutex mu;
Armed crash_armed, hold_armed;

// Counts a hit of `name` for `armed`; true when one of its specs asks for this one.
bool hit(Armed& armed, const char* value, const char* fifo, const char* name) {
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = std::string(value) + '\n' + (fifo ? fifo : "");
  if (armed.key != key) armed = Armed{key, parse(value), {}};
  bool named = false;
  for (const Spec& s : armed.specs) named = named || s.name == name;
  if (!named) return false;
  const long seen = ++armed.seen[name];
  for (Spec& s : armed.specs) {
    if (s.name == name && s.hit == seen && !s.done) {
      s.done = true;
      return true;
    }
  }
  return false;
}

int open_retrying(const char* path, int flags) {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Says "NAME\n" to the test through `fifo` (the open waits for its
// reader), then waits for its release: `fifo`.NAME, a FIFO of this point's
// own, opened for reading waits for the test's writer, and the read ends
// when the test closes it.
void hold(const char* fifo, const char* name) {
  const std::string go = std::string(fifo) + "." + name;
  if (::mkfifo(go.c_str(), 0600) != 0 && errno != EEXIST) return;
  int fd = open_retrying(fifo, O_WRONLY);
  if (fd < 0) return;  // no FIFO: nothing to hold for
  const std::string line = std::string(name) + "\n";
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
  fd = open_retrying(go.c_str(), O_RDONLY);
  if (fd < 0) return;
  char c;
  while (::read(fd, &c, 1) > 0 || errno == EINTR) {
    errno = 0;
  }
  ::close(fd);
}

}  // namespace

void test_point(const char* name) {
  if (const char* crash = std::getenv("INFERCOST_TEST_CRASH_AT")) {
    if (hit(crash_armed, crash, nullptr, name)) ::kill(::getpid(), SIGKILL);
  }
  if (const char* at = std::getenv("INFERCOST_TEST_HOLD_AT")) {
    const char* fifo = std::getenv("INFERCOST_TEST_HOLD_FIFO");
    if (fifo && hit(hold_armed, at, fifo, name)) hold(fifo, name);
  }
}

}  // namespace infercost
