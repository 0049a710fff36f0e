// The harness' side of the report channel (runs inside the sandboxed child). The token and the
// channel's descriptor live here, in C++ memory: Python code, the candidate's included, can only
// send through channel_send(), which refuses calls from other threads and calls with one of the
// candidate's frames on the stack.
#include <fcntl.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kgym/sandbox/report_token.hpp"

namespace nb = nanobind;

namespace kgym::bindings {
namespace {

struct ChannelState {
  int fd = -1;
  std::string token;
  unsigned long owner_thread = 0;
  std::string forbidden_file;  // frames from this file may not send
  int violations = 0;
  bool violations_reported = false;
};

ChannelState& state() {
  static ChannelState s;
  return s;
}

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("report channel: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

bool candidate_on_stack(const std::string& suffix) {
  if (suffix.empty()) return false;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  bool found = false;
  while (frame != nullptr && !found) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    PyObject* filename = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
    const char* name = filename != nullptr ? PyUnicode_AsUTF8(filename) : nullptr;
    if (name != nullptr) {
      const std::string file(name);
      found = file.size() >= suffix.size() &&
              file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
    } else {
      PyErr_Clear();
    }
    Py_XDECREF(filename);
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  return found;
}

void channel_open(int report_fd, int token_fd, const std::string& forbidden_file) {
  auto& s = state();
  if (s.fd >= 0) throw std::runtime_error("the report channel is already open");
  std::string token;
  {
    // The token may come after the channel: the process's other threads go on meanwhile.
    nb::gil_scoped_release unlocked;
    char buf[128];
    ssize_t n;
    while (((n = ::read(token_fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) &&
           token.size() < 1024) {
      if (n > 0) token.append(buf, static_cast<size_t>(n));
    }
    ::close(token_fd);
  }
  if (token.empty()) throw std::runtime_error("no report token was provided");
  // Off the well-known descriptor number; the old number is closed.
  const int fd = fcntl(report_fd, F_DUPFD_CLOEXEC, 200);
  if (fd < 0) throw std::runtime_error(std::string("report channel: ") + std::strerror(errno));
  ::close(report_fd);
  s.fd = fd;
  s.token = std::move(token);
  s.owner_thread = PyThread_get_thread_ident();
  s.forbidden_file = forbidden_file;
}

void channel_send(const std::string& payload) {
  auto& s = state();
  if (s.fd < 0) throw std::runtime_error("the report channel is not open");
  if (payload.find('\n') != std::string::npos) {
    throw std::invalid_argument("a report record must be one line");
  }
  if (PyThread_get_thread_ident() != s.owner_thread || candidate_on_stack(s.forbidden_file)) {
    ++s.violations;
    throw std::runtime_error("the report channel is reserved for the harness");
  }
  if (s.violations > 0 && !s.violations_reported) {
    s.violations_reported = true;
    write_all(s.fd,
              sandbox::seal_record(s.token,
                                   "{\"type\":\"violation\",\"detail\":\"the candidate tried to "
                                   "send on the harness' report channel\"}"));
  }
  write_all(s.fd, sandbox::seal_record(s.token, payload));
}

void channel_close() {
  auto& s = state();
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
  // A process forked from the judge (a runner) calls this first: the token must not survive in
  // memory that candidate code can read.
  volatile char* bytes = s.token.data();
  for (size_t i = 0; i < s.token.size(); ++i) bytes[i] = 0;
  s.token.clear();
}

}  // namespace

void bind_channel(nb::module_& m) {
  m.def("channel_open", &channel_open, nb::arg("report_fd"), nb::arg("token_fd"),
        nb::arg("forbidden_file"),
        "Harness only: take the report channel and its token before the candidate is imported.");
  m.def("channel_send", &channel_send, nb::arg("payload"),
        "Harness only: send one JSON record, sealed with the job's token.");
  m.def("channel_close", &channel_close, "Harness only: close the report channel.");
}

}  // namespace kgym::bindings
