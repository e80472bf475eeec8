"""`anvil bench --paced` driven from Python: one prediction per request, for scripts that alternate
engines or builds run by run (ab_paced.py, bench_peers.py --paced)."""

import os
import shlex
import subprocess


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
