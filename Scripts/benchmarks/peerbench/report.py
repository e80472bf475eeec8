"""The report: Markdown tables of what a run measured, and the latency-versus-batch plot.
Everything here works on a Results object, so it can be checked on made-up timings."""

import os
import re
import statistics
from dataclasses import dataclass, field

from .measure import Timing
from .networks import NETWORKS


@dataclass
class Results:
    """What a run measured. Keys of `timings` and `rounds` are (network, batch, threads)."""
    engines: list                                # engine objects, in the run's order (key, title)
    configs: list = field(default_factory=list)  # the main table's configurations, in order
    timings: dict = field(default_factory=dict)  # key -> {engine key: Timing, median of the rounds}
    rounds: dict = field(default_factory=dict)   # key -> {engine key: [Timing of each round]}
    flops: dict = field(default_factory=dict)    # network -> (counted FLOPs per image, parameters)

    def add(self, key, combined, rounds):
        self.timings[key], self.rounds[key] = combined, rounds

    def anvils(self):
        return [e for e in self.engines if e.key.startswith("anvil")]

    def peers(self):
        return [e for e in self.engines if not e.key.startswith("anvil")]

    def get(self, key, engine):
        return self.timings.get(key, {}).get(engine.key, Timing(error="not run"))


def fmt_value(ms):
    """Three significant figures, at most three decimals: 0.312, 7.56, 65.5, 169."""
    if ms < 1:
        return f"{ms:.3f}"
    if ms < 10:
        return f"{ms:.2f}"
    return f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def fmt_ms(timing):
    return fmt_value(timing.median_ms) if timing.ok else "failed"


def fmt_ratio(mine, theirs):
    """mine ÷ theirs to two decimals, '–' when either is missing."""
    if not (mine and theirs and mine.ok and theirs.ok):
        return "–"
    return f"{mine.median_ms / theirs.median_ms:.2f}"


NUMERIC_CELL = re.compile(r"^[0-9.,:()–%\-× ]*$|^failed$|^–$")


def table(header, rows):
    """A Markdown table; columns whose cells are all numbers are right-aligned."""
    numeric = [bool(rows) and all(NUMERIC_CELL.match(str(row[i])) for row in rows) for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def title(name):
    return NETWORKS[name].title if name in NETWORKS else name


def latency_table(results, configs=None):
    """(header, rows): each configuration's median ms per engine, then each Anvil engine's time
    ÷ each peer's (below 1: Anvil is faster)."""
    engines, anvils, peers = results.engines, results.anvils(), results.peers()
    header = ["network", "batch", "threads"] + [e.title for e in engines]
    header += [f"{a.title} ÷ {p.title}" for a in anvils for p in peers]
    rows = []
    for key in results.configs if configs is None else configs:
        row = [title(key[0]), key[1], key[2]] + [fmt_ms(results.get(key, e)) for e in engines]
        row += [fmt_ratio(results.get(key, a), results.get(key, p)) for a in anvils for p in peers]
        rows.append(row)
    return header, rows


def round_ratios(results, key, mine, theirs):
    """mine ÷ theirs in each round where both ran: the engines of a round ran minutes apart at
    most, so the spread of these is the run's own measure of the machine's noise."""
    rounds = results.rounds.get(key, {})
    return [a.median_ms / b.median_ms for a, b in zip(rounds.get(mine.key, []), rounds.get(theirs.key, []))
            if a.ok and b.ok]


def spread_table(results):
    """(header, rows): the lowest and highest ratio over the rounds, per Anvil engine and peer."""
    anvils, peers = results.anvils(), results.peers()
    header = ["network", "batch", "threads"] + [f"{a.title} ÷ {p.title}" for a in anvils for p in peers]
    rows = []
    for key in results.configs:
        row = [title(key[0]), key[1], key[2]]
        for a in anvils:
            for p in peers:
                ratios = round_ratios(results, key, a, p)
                row.append(f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else "–")
        rows.append(row)
    return header, rows


def scaling_table(results):
    """(header, rows): time on the fewest threads ÷ time on the most, per network, batch and engine."""
    threads = sorted({key[2] for key in results.configs})
    if len(threads) < 2:
        return None, []
    low, high = threads[0], threads[-1]
    pairs = list(dict.fromkeys((key[0], key[1]) for key in results.configs))
    rows = [[title(name), batch] + [fmt_ratio(results.get((name, batch, low), e), results.get((name, batch, high), e))
                                    for e in results.engines] for name, batch in pairs]
    return (low, high), rows


def sweep_table(results, name, threads, batches):
    """(header, rows): ms and images/s per engine at each batch of the sweep."""
    engines = results.engines
    header = ["batch"] + [f"{e.title} ms" for e in engines] + [f"{e.title} images/s" for e in engines]
    rows = []
    for batch in batches:
        timings = [results.get((name, batch, threads), e) for e in engines]
        rows.append([batch] + [fmt_ms(t) for t in timings]
                    + [f"{batch * 1000 / t.median_ms:,.0f}" if t.ok else "–" for t in timings])
    return header, rows


def report(context, results, engines_ran, networks_info, sweep=None, plot_file=None, load_rows=(),
           memory_rows=(), problems=(), markdown_path=None):
    """The whole Markdown report. `context`: machine, flags, load, versions, date, command, method
    text; `engines_ran`: [(title, what it ran)]; `networks_info`: {network: note on what Anvil opened}."""
    out = ["## Anvil against ONNX Runtime and OpenVINO", ""]
    out += [f"- Machine: {context['machine']}",
            f"- CPU flags of note: {context['flags']}",
            f"- Date: {context['date']}; commit {context['commit']}; the run took {context['duration']}",
            f"- Command: `{context['command']}`",
            f"- Load average (1 / 5 / 15 min) at the start: {context['load_start']}; at the end: {context['load_end']}; "
            f"other processes used {100 * context['other_load']:.0f}% of the CPUs while it ran",
            f"- Versions: {context['versions']}",
            f"- Method: {context['method']}", ""]

    out += ["### What each engine ran", ""]
    out += [f"- {name}: {what}" for name, what in engines_ran]
    out += [f"- {title(name)}: {note}" for name, note in networks_info.items()] + [""]

    out += ["### Networks", ""]
    rows = []
    anvil_flops = {}
    for engine in results.anvils():
        for name, value in getattr(engine, "flops", {}).items():
            anvil_flops.setdefault(name, value)
    for name, (flops, parameters) in results.flops.items():
        network = NETWORKS[name]
        rows.append([network.title, "×".join(str(d) for d in network.input_chw[1:] + network.input_chw[:1]),
                     f"{parameters:,}", f"{flops / 1e9:.4g}", f"{network.reference_gflop:g}",
                     f"{anvil_flops[name] / 1e9:.4g}" if name in anvil_flops else "–"])
    out += [table(["network", "input (H×W×C)", "parameters", "GFLOP / image (2 × MACs, counted)", "published",
                   "Anvil's count"], rows), ""]

    out += ["### Latency (median ms per batch; lower is better)", "",
            "Ratios are Anvil's time ÷ the peer's from the same run: below 1, Anvil is faster.", ""]
    out += [table(*latency_table(results)), ""]
    if any(len(v) > 1 for r in results.rounds.values() for v in r.values()):
        out += ["### The ratios' spread over the rounds (lowest–highest)", "", table(*spread_table(results)), ""]
    threads, rows = scaling_table(results)
    if rows:
        out += [f"### Thread scaling (time on {threads[0]} thread(s) ÷ time on {threads[1]})", "",
                table(["network", "batch"] + [e.title for e in results.engines], rows), ""]
    if sweep:
        name, sweep_threads, batches = sweep
        out += [f"### Latency versus batch: {title(name)}, {sweep_threads} thread(s)", "",
                table(*sweep_table(results, name, sweep_threads, batches)), ""]
        if plot_file:
            base = os.path.dirname(os.path.abspath(markdown_path)) if markdown_path else os.getcwd()
            out += [f"![latency versus batch]({os.path.relpath(plot_file, base)})", ""]
    if load_rows:
        out += [f"### Load time ({context['load_network']}, warm page cache, median of {context['load_repeats']}, "
                f"{context['extra_threads']} thread(s); measured before the timing runs)", ""]
        rows = [[name, what, fmt_ms(t) if t.ok else f"failed: {t.error}",
                 f"{fmt_value(t.min_ms)}–{fmt_value(t.max_ms)}" if t.ok else "–"] for name, what, t in load_rows]
        out += [table(["engine", "what is timed", "median ms", "min–max ms"], rows), ""]
    if memory_rows:
        out += [f"### Peak resident memory ({context['load_network']}, batch 1, {context['extra_threads']} "
                "thread(s); each in a process of its own)", ""]
        rows = [[name, f"{kb / 1024:,.0f}" if kb else "failed", what] for name, kb, what in memory_rows]
        out += [table(["process", "peak RSS (MiB)", "what runs"], rows), ""]
    if problems:
        out += ["### Problems", ""] + [f"- {p}" for p in problems] + [""]
    return "\n".join(out)


def plot_sweep(results, sweep, path):
    """Latency versus batch of each engine, log-log, as a PNG at `path`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    name, threads, batches = sweep
    figure, axes = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for engine, marker in zip(results.engines, "osD^v<>"):
        points = [(b, results.get((name, b, threads), engine).median_ms) for b in batches
                  if results.get((name, b, threads), engine).ok]
        if points:
            axes.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=engine.title)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xticks(batches)
    axes.set_xticklabels([str(b) for b in batches])
    axes.set_xlabel("batch (images)")
    axes.set_ylabel("median latency per batch (ms)")
    axes.set_title(f"{title(name)}: latency versus batch, {threads} thread(s)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path)
    plt.close(figure)


def median_wait(waits):
    """'x ms median, y the longest' of the paced idle waits, or ''."""
    return f"{statistics.median(waits):.1f} ms median, {max(waits):.1f} the longest" if waits else ""
