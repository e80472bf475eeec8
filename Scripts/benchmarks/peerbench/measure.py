"""How a configuration is timed: warm-up, timed loops, rounds with the engine order rotated,
interleaving run by run (--paced), and one CPU for every engine of a one-thread round."""

import contextlib
import os
import statistics
import threading
import time
from dataclasses import dataclass

from paced_anvil import thread_cpu_ns, wait_for_idle_threads

from . import log


@dataclass
class Timing:
    """One engine's result for one configuration, in milliseconds per batch."""
    median_ms: float = float("nan")
    min_ms: float = float("nan")
    max_ms: float = float("nan")
    runs: int = 0
    error: str = ""

    @property
    def ok(self):
        return not self.error

    @classmethod
    def of(cls, times, error=""):
        """The median, min and max of `times` (ms), or a failed Timing."""
        if error or not times:
            return cls(error=error or "no measurement")
        return cls(statistics.median(times), min(times), max(times), len(times))


def combine(rounds):
    """The median of the rounds' medians, with the overall min and max."""
    good = [t for t in rounds if t.ok]
    if not good:
        return rounds[0] if rounds else Timing(error="not run")
    return Timing(statistics.median(t.median_ms for t in good), min(t.min_ms for t in good),
                  max(t.max_ms for t in good), sum(t.runs for t in good))


@dataclass
class Settings:
    """How long each engine is warmed up and timed, and how the engines take turns."""
    iterations: int = 10
    warmup: int = 3
    warmup_ms: float = 200.0
    rounds: int = 3
    paced: bool = False
    paced_pause_ms: float = 20.0
    paced_rewarm: int = 1
    paced_rewarm_ms: float = 5.0


def warm_up(run, warmup, warmup_ms=0.0):
    """`warmup` untimed runs, continued until `warmup_ms` have passed (an idle VM's CPUs take
    tens of milliseconds to reach speed)."""
    warm_until = time.perf_counter() + warmup_ms / 1000
    done = 0
    while done < warmup or time.perf_counter() < warm_until:
        run()
        done += 1


def time_once(run):
    """Milliseconds one call of `run` takes."""
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def timed_loop(run, warmup, iterations, warmup_ms=0.0):
    """The warm-up, then `iterations` timed runs."""
    warm_up(run, warmup, warmup_ms)
    return Timing.of([time_once(run) for _ in range(iterations)])


def _threads():
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


@contextlib.contextmanager
def one_cpu_for_one_thread(threads, index=0):
    """With one thread, runs the block with every thread of this process on one CPU — the
    `index`-th usable one, cycling — so every engine it times runs there (threads an engine
    starts inside the block and Anvil's subprocess inherit it); with more, changes nothing.

    A VM's virtual CPUs can differ in speed for minutes: one-thread engines left to the
    scheduler could each sit on a different one. Rounds take the CPUs in turn, so each engine
    sees all of them alike. Each thread's own affinity is restored afterwards."""
    if threads != 1:
        yield
        return
    usable = sorted(os.sched_getaffinity(0))
    cpu = {usable[index % len(usable)]}
    saved = {}
    for tid in _threads():
        try:
            saved[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, cpu)
        except OSError:  # the thread has ended
            pass
    os.sched_setaffinity(0, cpu)
    try:
        yield
    finally:
        for tid in _threads():
            try:
                os.sched_setaffinity(tid, saved.get(tid, set(usable)))
            except OSError:
                pass
        os.sched_setaffinity(0, set(usable))


class Measurer:
    """Times engines on configurations and keeps what went wrong.

    An engine (see engines.py) has `key`, `title`, `block(case, settings)` → Timing (its warm-up
    and --iterations timed runs in one block) and `turns(case, settings)` → an object whose
    `run()` times one warmed-up prediction, with `pids` (processes to wait for) and `close()`."""

    def __init__(self, settings):
        self.settings = settings
        self.problems = []
        self.idle_waits = []   # ms waited, after each paced pause, for the engines' threads to stop

    def measure(self, engines, case):
        """Every engine on `case`, --rounds times with the order rotated; returns
        ({key: median of the rounds}, {key: [Timing of each round]})."""
        settings = self.settings
        rounds = {engine.key: [] for engine in engines}
        for index in range(settings.rounds):
            shift = index % len(engines)
            order = engines[shift:] + engines[:shift]
            label = f"{case.label}" + (f" (round {index + 1}/{settings.rounds})" if settings.rounds > 1 else "")
            with one_cpu_for_one_thread(case.threads, index):
                if settings.paced:
                    self.paced_round(order, case, rounds, label)
                else:
                    self.block_round(order, case, rounds, label)
        return {key: combine(timings) for key, timings in rounds.items()}, rounds

    def record(self, engine, case, timing, rounds):
        if timing.ok:
            log(f"  {engine.title}: median {timing.median_ms:.3f} ms (min {timing.min_ms:.3f}, max {timing.max_ms:.3f})")
        else:
            self.problems.append(f"{engine.title}, {case.label}: {timing.error}")
            log(f"  {engine.title} failed: {timing.error}")
        rounds[engine.key].append(timing)

    def block_round(self, order, case, rounds, label):
        """Each engine in `order` once: its warm-up, then its timed runs in one block."""
        for engine in order:
            log(f"{label}: {engine.title}")
            try:
                timing = engine.block(case, self.settings)
            except Exception as error:  # noqa: BLE001 - report it and go on with the others
                timing = Timing(error=f"{type(error).__name__}: {error}")
            self.record(engine, case, timing, rounds)

    def paced_round(self, order, case, rounds, label):
        """Every engine set up and warmed up, then in turn (the turn's order rotating) untimed
        runs (--paced-rewarm, at least --paced-rewarm-ms) and one timed run, --iterations times,
        so all engines' timed runs are interleaved in time."""
        settings = self.settings
        log(f"{label}: " + ", ".join(e.title for e in order) + " interleaved")
        turns, errors = {}, {}
        times = {engine.key: [] for engine in order}
        try:
            for engine in order:
                try:
                    turns[engine.key] = engine.turns(case, settings)
                except Exception as error:  # noqa: BLE001
                    errors[engine.key] = f"{type(error).__name__}: {error}"
            for index in range(settings.iterations):
                live = [e for e in order if e.key in turns and e.key not in errors]
                shift = index % max(1, len(live))
                for engine in live[shift:] + live[:shift]:
                    turn = turns[engine.key]
                    try:
                        # Several threads: the previous engine's threads may still spin or be
                        # waking; a pause, then a wait until none of them runs.
                        if case.threads > 1:
                            time.sleep(settings.paced_pause_ms / 1000)
                            self.wait_for_idle([os.getpid()] + [p for t in turns.values() for p in t.pids])
                        # Untimed first: the other engines' runs have replaced this one's data in the caches.
                        warm_up(turn.run, settings.paced_rewarm, settings.paced_rewarm_ms)
                        times[engine.key].append(turn.run())
                    except Exception as error:  # noqa: BLE001
                        errors[engine.key] = f"{type(error).__name__}: {error}"
        finally:
            for key, turn in turns.items():
                try:
                    turn.close()
                except Exception as error:  # noqa: BLE001
                    errors.setdefault(key, f"{type(error).__name__}: {error}")
        for engine in order:
            self.record(engine, case, Timing.of(times[engine.key], errors.get(engine.key, "")), rounds)

    def wait_for_idle(self, pids):
        """Waits until no thread of `pids` but this one has run for 2 ms (at most 250 ms)."""
        me = threading.get_native_id()
        self.idle_waits.append(wait_for_idle_threads(lambda: thread_cpu_ns(pids, exclude=me)))
