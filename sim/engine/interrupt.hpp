// SIGINT/SIGTERM while simulating or publishing: the handlers only record the signal; the event
// loop and the writers check it (throw_if_interrupted) and the command exits 128 + signal with
// nothing published (docs/outputs.md "Exit status"). Used by the engine (sim/engine/simulator.cpp),
// the publishing of outputs (sim/outputs/publish.hpp) and the multi-run experiments.
#pragma once

#include <csignal>
#include <stdexcept>
#include <string>

namespace sim {

/// The run was interrupted by SIGINT or SIGTERM (exit 128 + signal).
struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig) : std::runtime_error("interrupted by signal " + std::to_string(sig)), signal(sig) {}
  int signal;
};

/// Signal number (SIGINT or SIGTERM) received while an InterruptGuard was installed, else 0.
int interrupt_signal();
/// Throws Interrupted when interrupt_signal() != 0. Cheap (one volatile read).
void throw_if_interrupted();

/// Installs SIGINT/SIGTERM handlers that only record the signal (checked by the event loop and
/// the writers); restores the previous handlers when destroyed. One at a time per process.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_{}, old_term_{};
};

/// Blocks SIGINT/SIGTERM for its lifetime (the publish step is never cut half-way).
class SignalBlock {
 public:
  SignalBlock();
  ~SignalBlock();
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

 private:
  sigset_t old_{};
};

}  // namespace sim
