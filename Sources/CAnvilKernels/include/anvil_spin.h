#ifndef ANVIL_SPIN_H
#define ANVIL_SPIN_H

/// One step of a busy wait: the CPU's spin-wait hint (`pause` on x86-64, `yield` on arm64), which
/// lets a waiting core idle its pipeline for a few tens of nanoseconds without giving up the CPU
/// — unlike `sched_yield`, a system call into the scheduler. Anvil's worker pool waits this way
/// for a while before it yields (see WorkerPool).
static inline void anvil_spin_wait(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
