"""The machine a run measured: CPU model, flags and caches, the versions of everything timed,
the commit, and how busy the machine was."""

import os
import platform
import re
import subprocess

from . import REPO

FLAGS_OF_NOTE = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")


def command_output(command, cwd=None):
    """The command's stdout and stderr, or '' when it fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=120)
        return (done.stdout + done.stderr).strip() if done.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cpuinfo():
    """(model name with vendor, family, model and stepping; the first CPU's flags; physical cores)."""
    model, flags, physical, identity, physical_id = "unknown CPU", set(), set(), {}, "0"
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name":
                    model = value
                elif key in ("vendor_id", "cpu family", "model", "stepping") and key not in identity:
                    identity[key] = value
                elif key == "flags" and not flags:
                    flags = set(value.split())
                elif key == "physical id":
                    physical_id = value
                elif key == "core id":
                    physical.add((physical_id, value))
    except OSError:
        pass
    if "cpu family" in identity:
        model += (f" ({identity.get('vendor_id', 'unknown vendor')} family {identity['cpu family']} model "
                  f"{identity.get('model', '?')} stepping {identity.get('stepping', '?')})")
    return model, flags, len(physical)


def cpu_flags():
    """The flags of the first CPU in /proc/cpuinfo."""
    return cpuinfo()[1]


def cache_sizes():
    """The first CPU's data and unified caches, e.g. "L1d 48K, L2 2048K, L3 266240K" (a VM's
    model name can hide the CPU's generation; its caches tell it)."""
    root, found = "/sys/devices/system/cpu/cpu0/cache", []

    def read(entry, name):
        with open(os.path.join(root, entry, name)) as handle:
            return handle.read().strip()

    try:
        for entry in sorted(os.listdir(root)):
            kind = read(entry, "type")
            if kind in ("Data", "Unified"):
                found.append(f"L{read(entry, 'level')}{'d' if kind == 'Data' else ''} {read(entry, 'size')}")
    except OSError:
        pass
    return ", ".join(found)


def machine_description():
    """One line: CPU, cores, the flags of note, caches, memory, kernel."""
    model, flags, cores = cpuinfo()
    logical = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0))
    memory = "unknown"
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    memory = f"{int(line.split()[1]) / 1024 ** 2:.1f} GiB"
    except OSError:
        pass
    noted = " ".join(f for f in FLAGS_OF_NOTE if f in flags) or "no AVX2"
    caches = cache_sizes()
    return (f"{model}; {f'{cores} cores, ' if cores else ''}{logical} logical CPUs ({usable} usable by this "
            f"process); {noted}; " + (f"CPU 0's caches {caches}; " if caches else "")
            + f"{memory} RAM; Linux {platform.release()}")


def load_average():
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def cpu_seconds():
    """(CPU seconds all processes have spent busy since boot, CPU seconds of this process and its
    waited-for children)."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    busy = sum(fields[:8]) - fields[3] - fields[4]  # all but idle and iowait
    own = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), own.user + own.system + own.children_user + own.children_system


def other_load(start, wall_seconds, cpus):
    """The share of the CPUs other processes used since `start` (a cpu_seconds() value)."""
    end = cpu_seconds()
    other = (end[0] - start[0]) - (end[1] - start[1])
    return max(0.0, other / (wall_seconds * cpus))


def commit():
    """The short commit, with a note when Sources/ or Package.swift differ from it."""
    head = command_output(["git", "rev-parse", "--short", "HEAD"], cwd=REPO) or "unknown commit"
    dirty = command_output(["git", "status", "--porcelain", "--", "Sources", "Package.swift"], cwd=REPO)
    return head + (" + uncommitted changes in Sources/ or Package.swift" if dirty else "")


def versions(anvil_binary):
    """The versions of the peers, PyTorch, Swift and OpenBLAS, one line (the commit is commit()'s)."""
    parts = []
    for module, label in (("onnxruntime", "ONNX Runtime"), ("openvino", "OpenVINO"), ("torch", "PyTorch"),
                          ("onnx", "onnx"), ("onnxscript", "onnxscript"), ("numpy", "numpy")):
        try:
            imported = __import__(module)
            version = imported.get_version().split("-")[0] if module == "openvino" else imported.__version__
            parts.append(f"{label} {version}")
        except (ImportError, AttributeError):
            pass
    try:
        from anvil_convert.torch_zoo import import_torchvision
        parts.append(f"torchvision {import_torchvision().__version__}")
    except Exception:  # noqa: BLE001 - only a version string
        pass
    swift = next((line for line in command_output(["swift", "--version"]).splitlines() if "Swift version" in line), "")
    parts.append(swift.split(" (")[0].replace("Swift version", "Swift") if swift else "Swift unknown")
    blas = ""
    for package in ("libopenblas0-pthread", "libopenblas0-openmp", "libopenblas0-serial", "libopenblas0"):
        version = command_output(["dpkg-query", "-W", "-f", "${Version}", package])
        if version:
            blas = f"OpenBLAS {version} ({package})"
            break
    library = re.search(r"libopenblas\S* => (\S+)", command_output(["ldd", anvil_binary]) if anvil_binary else "")
    if library:
        blas += f", Anvil links {os.path.realpath(library.group(1))}"
    parts.append(blas or "OpenBLAS unknown")
    return ", ".join(parts)
