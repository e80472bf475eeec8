"""Run-by-run interleaving in the benchmark scripts: the `anvil bench --paced` driver
(Scripts/benchmarks/paced_anvil.py, against a stand-in for the tool that speaks its protocol),
peerbench's interleaved rounds on stand-in engines, and the one-CPU pinning of one-thread
configurations."""

import os
import stat
import sys
import textwrap
import threading
import time
from types import SimpleNamespace

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import paced_anvil  # noqa: E402
from paced_anvil import PacedAnvil  # noqa: E402
from peerbench import measure  # noqa: E402
from peerbench.engines import AnvilEngine  # noqa: E402
from peerbench.measure import Measurer, Settings, one_cpu_for_one_thread  # noqa: E402
# A stand-in for `anvil bench --paced`: the same lines in the same order. It writes its arguments
# and CPU affinity to $FAKE_LOG; with FAKE_FAIL set it fails before `ready`, as a bad model does.
FAKE_TOOL = textwrap.dedent("""\
    #!{python}
    import os, sys
    with open(os.environ["FAKE_LOG"], "w") as log:
        log.write(" ".join(sys.argv[1:]) + "\\n" + ",".join(map(str, sorted(os.sched_getaffinity(0)))) + "\\n")
    if os.environ.get("FAKE_FAIL"):
        print("Error: no network or model file named 'nothing'", file=sys.stderr)
        sys.exit(1)
    print("isa: avx2 (detected; the CPU runs scalar, avx2)")
    print("model: probabilities from mnist; batch 1; threads 1")
    print("ready", flush=True)
    runs = 0
    for line in sys.stdin:
        count = int(line)
        runs += count
        print("runs_ms: " + " ".join(["2.5000"] * count), flush=True)
    print("gflops: 11.1")
    print(f"median_ms: 2.500 (min 2.500, max 2.500) over {{runs}} runs", flush=True)
""").format(python=sys.executable)


@pytest.fixture
def fake_tool(tmp_path, monkeypatch):
    path = tmp_path / "anvil"
    path.write_text(FAKE_TOOL)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "log"
    monkeypatch.setenv("FAKE_LOG", str(log))
    return str(path), log


def test_paced_anvil_runs_on_request_on_the_cpus_given(fake_tool):
    binary, log = fake_tool
    cpu = max(os.sched_getaffinity(0))
    anvil = PacedAnvil(binary, ["mnist", "--threads", "1"], warmup=2, warmup_ms=50, cpus={cpu})
    assert anvil.line("isa: ").startswith("avx2") and anvil.line("nothing: ") == ""
    assert [anvil.run(), anvil.run()] == [2.5, 2.5]
    rest = anvil.close()
    assert "over 2 runs" in rest and "gflops: 11.1" in rest
    arguments, cpus = log.read_text().splitlines()
    assert arguments == "bench mnist --threads 1 --paced --warmup 2 --warmup-ms 50"
    assert cpus == str(cpu)


def test_paced_anvil_names_the_command_and_its_error_when_it_fails(fake_tool, monkeypatch):
    binary, _ = fake_tool
    monkeypatch.setenv("FAKE_FAIL", "1")
    with pytest.raises(RuntimeError) as failure:
        PacedAnvil(binary, ["nothing"])
    assert "bench nothing --paced" in str(failure.value) and "exited 1" in str(failure.value)
    assert "no network or model file named 'nothing'" in str(failure.value)


class StandInTurns:
    """What an engine's `turns` returns, minus the engine: each run logged, times from a list."""

    def __init__(self, calls, name, times):
        self.calls, self.name, self.times, self.pids = calls, name, times, []

    def run(self):
        self.calls.append(self.name)
        value = next(self.times)
        if value is None:
            raise RuntimeError("session died")
        return value

    def close(self):
        pass


def stand_in(calls, key, title, times):
    turns = lambda case, settings: StandInTurns(calls, key, iter(times))
    return SimpleNamespace(key=key, title=title, turns=turns)


def case(threads=1):
    return SimpleNamespace(label=f"mnist batch 1, {threads} thread(s)", threads=threads, batch=1,
                           network=SimpleNamespace(name="mnist"))


def paced_round(calls, ort_times, threads=1, rewarm=0, pause_ms=20.0, rewarm_ms=0.0, anvil_times=None):
    """One paced round of a stand-in ONNX Runtime and a stand-in Anvil (4 ms a run); returns
    (the measurer, {key: [Timing]})."""
    measurer = Measurer(Settings(iterations=4, warmup=0, warmup_ms=0.0, rounds=1, paced=True,
                                 paced_pause_ms=pause_ms, paced_rewarm=rewarm, paced_rewarm_ms=rewarm_ms))
    measurer.wait_for_idle = lambda pids: measurer.idle_waits.append(pids)
    engines = [stand_in(calls, "onnxruntime", "ONNX Runtime", ort_times),
               stand_in(calls, "anvil", "Anvil", anvil_times or [4.0] * 32)]
    rounds = {"onnxruntime": [], "anvil": []}
    measurer.paced_round(engines, case(threads), rounds, "label")
    return measurer, rounds


def test_a_paced_round_interleaves_the_engines_run_by_run():
    calls = []
    _, rounds = paced_round(calls, [1.0, 3.0, 2.0, 9.0])
    # Each timed run alternates with the other engine's, the turn's order rotating.
    assert calls == ["onnxruntime", "anvil", "anvil", "onnxruntime", "onnxruntime", "anvil", "anvil", "onnxruntime"]
    ort, = rounds["onnxruntime"]
    assert (ort.median_ms, ort.min_ms, ort.max_ms, ort.runs) == (2.5, 1.0, 9.0, 4)
    anvil, = rounds["anvil"]
    assert (anvil.median_ms, anvil.runs) == (4.0, 4)


def test_each_turn_starts_with_untimed_runs_when_asked():
    calls = []
    _, rounds = paced_round(calls, [50.0, 1.0, 50.0, 3.0, 50.0, 2.0, 50.0, 9.0], rewarm=1)
    # Two runs per turn, the first untimed (the 50 ms ones never count).
    assert calls == ["onnxruntime"] * 2 + ["anvil"] * 4 + ["onnxruntime"] * 4 + ["anvil"] * 4 + ["onnxruntime"] * 2
    ort, = rounds["onnxruntime"]
    assert (ort.median_ms, ort.min_ms, ort.max_ms, ort.runs) == (2.5, 1.0, 9.0, 4)


def test_a_failing_engine_is_reported_and_the_others_go_on():
    calls = []
    measurer, rounds = paced_round(calls, [1.0, None])
    assert not rounds["onnxruntime"][0].ok and "session died" in rounds["onnxruntime"][0].error
    assert rounds["anvil"][0].ok and rounds["anvil"][0].runs == 4
    assert calls.count("onnxruntime") == 2 and calls.count("anvil") == 4
    assert any("ONNX Runtime, mnist batch 1, 1 thread(s): RuntimeError: session died" in p for p in measurer.problems)


def test_rounds_rotate_the_order_and_keep_the_median_of_the_rounds():
    calls = []
    measurer = Measurer(Settings(iterations=1, warmup=0, warmup_ms=0.0, rounds=3))
    block = lambda key, values: (lambda case, settings: (calls.append(key), measure.Timing.of([next(values)]))[1])
    engines = [SimpleNamespace(key="a", title="A", block=block("a", iter([1.0, 5.0, 3.0]))),
               SimpleNamespace(key="b", title="B", block=block("b", iter([2.0, 2.0, 8.0])))]
    combined, rounds = measurer.measure(engines, case(threads=2))
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert combined["a"].median_ms == 3.0 and combined["b"].median_ms == 2.0
    assert (combined["a"].min_ms, combined["a"].max_ms, combined["a"].runs) == (1.0, 5.0, 3)
    assert [t.median_ms for t in rounds["b"]] == [2.0, 2.0, 8.0]


def test_the_anvil_engine_reads_its_isa_and_flops_from_a_paced_run(fake_tool):
    binary, log = fake_tool
    engine = AnvilEngine(binary)
    settings = Settings(warmup=0, warmup_ms=0.0)
    the_case = SimpleNamespace(anvil_model="model.onnx", batch=1, threads=1, network=SimpleNamespace(name="mnist"))
    turns = engine.turns(the_case, settings)
    assert [turns.run(), turns.run()] == [2.5, 2.5] and turns.pids
    turns.close()
    assert engine.isa_seen == {"avx2 (detected; the CPU runs scalar, avx2)"}
    assert engine.flops["mnist"] == pytest.approx(11.1e9 * 0.0025)
    assert log.read_text().splitlines()[0] == "bench model.onnx --batch 1 --threads 1 --paced --warmup 0 --warmup-ms 0.0"


def test_one_thread_runs_every_thread_on_one_cpu_taken_in_turn_and_restored():
    usable = sorted(os.sched_getaffinity(0))
    stop, started = threading.Event(), []
    helper = threading.Thread(target=lambda: (started.append(threading.get_native_id()), stop.wait()))
    helper.start()
    try:
        while not started:
            time.sleep(0.001)
        for index in range(3):
            with one_cpu_for_one_thread(1, index):
                cpu = {usable[index % len(usable)]}
                assert os.sched_getaffinity(0) == cpu and os.sched_getaffinity(started[0]) == cpu
            assert sorted(os.sched_getaffinity(0)) == usable and sorted(os.sched_getaffinity(started[0])) == usable
        with one_cpu_for_one_thread(2, 1):
            assert sorted(os.sched_getaffinity(0)) == usable
    finally:
        stop.set()
        helper.join()


def test_turns_of_several_threads_start_after_a_pause(monkeypatch):
    """Two threads: a pause before every turn (the other engine's threads stop spinning); one
    thread: none (nothing of the other engine's is left running)."""
    for threads, pauses in ((2, [0.02] * 8), (1, [])):
        calls = []
        monkeypatch.setattr(measure.time, "sleep", lambda seconds: calls.append(seconds))
        paced_round(calls, [1.0, 3.0, 2.0, 9.0], threads=threads)
        assert [c for c in calls if not isinstance(c, str)] == pauses
        if pauses:  # each pause comes right before a turn's runs
            assert calls[:4] == [0.02, "onnxruntime", 0.02, "anvil"]


def test_turns_of_several_threads_wait_for_the_engines_threads_after_the_pause(monkeypatch):
    """Two threads: after each pause, a wait for this process's threads and the engines'
    processes to stop running; one thread: none."""
    for threads, waits in ((2, 8), (1, 0)):
        monkeypatch.setattr(measure.time, "sleep", lambda seconds: None)
        measurer, _ = paced_round([], [1.0, 3.0, 2.0, 9.0], threads=threads)
        assert len(measurer.idle_waits) == waits
        assert all(pids == [os.getpid()] for pids in measurer.idle_waits)  # the stand-ins have no process


def test_the_idle_wait_lasts_until_the_threads_stop_running():
    """Threads that run 5 more polls of 2 ms, then stop: the wait ends at the first quiet window;
    threads that never stop: the wait ends at its limit."""
    clock = [0.0]
    def sleep(seconds):
        clock[0] += seconds
    busy_until = 0.010
    def read():  # a thread on a CPU the whole time until busy_until, then none
        return int(min(clock[0], busy_until) * 1e9)
    waited = paced_anvil.wait_for_idle_threads(read, settle_ms=2.0, limit_ms=250.0, sleep=sleep, clock=lambda: clock[0])
    assert waited == pytest.approx(12.0)  # 5 busy windows, then one quiet one
    clock[0] = 0.0
    waited = paced_anvil.wait_for_idle_threads(lambda: int(clock[0] * 1e9), settle_ms=2.0, limit_ms=20.0,
                                               sleep=sleep, clock=lambda: clock[0])
    assert waited == pytest.approx(20.0)


def test_thread_time_counts_every_thread_but_the_one_excluded():
    """This process's threads' CPU time grows while one of them spins, and excluding the
    spinning thread leaves it out."""
    import threading
    stop = threading.Event()
    spinner_id = []
    def spin():
        spinner_id.append(threading.get_native_id())
        while not stop.is_set():
            pass
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        while not spinner_id:
            time.sleep(0.001)
        me = threading.get_native_id()
        before, before_without = paced_anvil.thread_cpu_ns([os.getpid()], exclude=me), \
            paced_anvil.thread_cpu_ns([os.getpid()], exclude=spinner_id[0])
        # Until the spinner has run 20 ms (a busy machine gives it less than the wall time).
        deadline = time.perf_counter() + 10
        while True:
            time.sleep(0.05)
            grown = paced_anvil.thread_cpu_ns([os.getpid()], exclude=me) - before
            grown_without = paced_anvil.thread_cpu_ns([os.getpid()], exclude=spinner_id[0]) - before_without
            if grown > 20e6 or time.perf_counter() > deadline:
                break
    finally:
        stop.set()
        thread.join()
    assert grown > 20e6
    assert grown_without < grown / 2
    assert paced_anvil.thread_cpu_ns([2**22 + 12345]) == 0  # no such process


def test_a_turn_rewarms_for_at_least_the_time_asked(monkeypatch):
    """--paced-rewarm-ms 10 with runs of 4 ms: three untimed runs (12 ms) before each timed one,
    more than the one --paced-rewarm asks."""
    calls = []
    # A clock that advances 4 ms with each run the stand-ins make.
    monkeypatch.setattr(measure.time, "perf_counter", lambda: len(calls) * 0.004)
    _, rounds = paced_round(calls, [4.0] * 16, rewarm=1, rewarm_ms=10.0)
    assert calls[:8] == ["onnxruntime"] * 4 + ["anvil"] * 4
    assert calls.count("onnxruntime") == 16 and rounds["onnxruntime"][0].runs == 4


# ---- busy_neighbour.py: the spinning neighbour and the median it reads ----

import busy_neighbour  # noqa: E402


def test_busy_neighbour_spins_on_its_cpu_and_ends():
    cpu = sorted(os.sched_getaffinity(0))[-1]
    with busy_neighbour.busy_neighbour(cpu) as spinner:
        assert spinner.poll() is None
        assert os.sched_getaffinity(spinner.pid) == {cpu}
    assert spinner.poll() is not None


def test_busy_neighbour_reads_anvil_bench_median():
    assert busy_neighbour.median_ms("isa: avx2\nmedian_ms: 16.025 (min 15.9, max 17.0) over 20 runs\n") == 16.025
    with pytest.raises(ValueError):
        busy_neighbour.median_ms("Error: no network or model file named 'x'")
