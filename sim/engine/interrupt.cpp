// SIGINT/SIGTERM handling (sim/engine/interrupt.hpp).
#include "sim/engine/interrupt.hpp"

#include <pthread.h>

namespace sim {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig) { g_signal = sig; }

}  // namespace

int interrupt_signal() { return g_signal; }

void throw_if_interrupted() {
  if (g_signal) throw Interrupted(g_signal);
}

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a second signal kills at once (stale staging is cleaned next run)
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

SignalBlock::SignalBlock() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &s, &old_);
}

SignalBlock::~SignalBlock() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

}  // namespace sim
