"""`anvil bench --paced` driven from Python: one prediction per request, for scripts that alternate
engines or builds run by run (ab_paced.py, bench_peers.py --paced through peerbench); and the wait, between two
engines' turns, until neither has a thread still running."""

import os
import shlex
import subprocess
import time


class PacedAnvil:
    """One `anvil bench <arguments> --paced` process, compiled and warmed up: `run()` times one
    prediction by the process's own clock. Runs on `cpus` (a set of CPU numbers) when given."""

    def __init__(self, binary, arguments, warmup=3, warmup_ms=0.0, cpus=None):
        command = [binary, "bench", *arguments, "--paced", "--warmup", str(warmup), "--warmup-ms", str(warmup_ms)]
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        self.command = shlex.join(command)
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1, preexec_fn=pin)
        self.header = []
        for line in self.process.stdout:
            line = line.rstrip("\n")
            if line == "ready":
                return
            self.header.append(line)
        error = self.process.stderr.read().strip()
        self.process.wait()
        last = error.splitlines()[-1] if error else (self.header[-1] if self.header else "no output")
        raise RuntimeError(f"`{self.command}` exited {self.process.returncode} before it was ready: {last}")

    def line(self, prefix):
        """The text after `prefix` on the first header line that starts with it (e.g. 'isa: '), or ''."""
        return next((h[len(prefix):] for h in self.header if h.startswith(prefix)), "")

    def run(self):
        """Times one prediction; milliseconds."""
        self.process.stdin.write("1\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if not answer.startswith("runs_ms: "):
            raise RuntimeError(f"`{self.command}` answered {answer!r} to a request for one run")
        return float(answer.split()[1])

    def close(self):
        """Ends the process (end of its input) and returns its whole output after `ready`."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        rest = self.process.stdout.read()
        self.process.wait(timeout=120)
        return rest

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()


def thread_cpu_ns(pids, exclude=None):
    """Nanoseconds on a CPU so far of every thread of processes `pids` but thread `exclude` (Linux:
    each task's `schedstat`; threads that end between listing and reading are skipped)."""
    total = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            if exclude is not None and int(task) == exclude:
                continue
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as file:
                    total += int(file.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def wait_for_idle_threads(read, settle_ms=2.0, limit_ms=250.0, sleep=time.sleep, clock=time.perf_counter):
    """Waits until `read()` (threads' time on a CPU, ns) has not grown for `settle_ms`, at most
    `limit_ms`; returns the milliseconds waited. An engine's pool threads go on spinning or waiting
    for a next job after its run, and would take a CPU from the next engine's turn."""
    start = clock()
    last = read()
    while (clock() - start) * 1000 < limit_ms:
        sleep(settle_ms / 1000)
        now = read()
        if now - last < settle_ms * 1e6 * 0.05:  # under 5% of the window: only bookkeeping
            break
        last = now
    return (clock() - start) * 1000
