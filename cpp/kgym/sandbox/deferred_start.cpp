#include "kgym/sandbox/deferred_start.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "kgym/sandbox/child_setup.hpp"

namespace kgym::sandbox {

DeferredStart::~DeferredStart() { detail::close_fd(token_write_); }

void DeferredStart::attach(int token_write) {
  {
    std::lock_guard lock(mu_);
    detail::close_fd(token_write_);
    token_write_ = token_write;
    if (cancelled_) detail::close_fd(token_write_);
  }
  attached_.notify_all();
}

void DeferredStart::run_ended() {
  {
    std::lock_guard lock(mu_);
    run_ended_ = true;
    // The job's callbacks name its caller's frame, which returns once the run has: none is
    // called after this.
    on_line_ = {};
    on_report_end_ = {};
  }
  attached_.notify_all();
}

bool DeferredStart::begin(const std::string& token, double wall_seconds, LineCallback on_line,
                          ReportEndCallback on_report_end) {
  std::unique_lock lock(mu_);
  attached_.wait(lock, [&] { return token_write_ >= 0 || run_ended_ || cancelled_ || begun_at_; });
  if (cancelled_ || begun_at_ || token_write_ < 0 || token.empty()) return false;
  // A socket rather than a pipe (the run makes it so): a child that has gone is EPIPE here, not
  // a SIGPIPE for the whole supervisor.
  size_t done = 0;
  while (done < token.size()) {
    const ssize_t n = ::send(token_write_, token.data() + done, token.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  detail::close_fd(token_write_);  // the harness reads the token to its end
  on_line_ = std::move(on_line);
  on_report_end_ = std::move(on_report_end);
  wall_seconds_ = wall_seconds;
  begun_at_ = Clock::now();
  return true;
}

void DeferredStart::cancel() {
  std::lock_guard lock(mu_);
  if (begun_at_) return;
  cancelled_ = true;
  detail::close_fd(token_write_);
}

std::optional<DeferredStart::Clock::time_point> DeferredStart::begun_at() const {
  std::lock_guard lock(mu_);
  return begun_at_;
}

double DeferredStart::wall_seconds() const {
  std::lock_guard lock(mu_);
  return wall_seconds_;
}

bool DeferredStart::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void DeferredStart::forward(const std::string& line) const {
  std::lock_guard lock(mu_);
  if (on_line_) on_line_(line);
}

void DeferredStart::report_ended(const ChildOutcome& so_far) const {
  ReportEndCallback call;
  {
    std::lock_guard lock(mu_);
    call = on_report_end_;  // called unlocked: it may answer the job (the service's work)
  }
  if (call) call(so_far);
}

}  // namespace kgym::sandbox
