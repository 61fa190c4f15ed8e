"""Provenance: what machine, what software, what commit a measurement came from.

machine_id() names the machine as results/ does (asv-style): the CPU model, the cores, the
memory and the widest vector instruction set, e.g. "amd-epyc-2c-24g-avx2", and the GPU
where nvidia-smi lists one ("...-avx512-h100-80gb-hbm3"). Rows of
different machines never mix: each machine has its own folder results/<machine_id>/. The
instruction set is part of the name because two machines with the same CPU name can differ
in it (a 2-core AMD EPYC with AVX-512 runs the learner 2.3x faster than one without).
"""
from __future__ import annotations

import functools
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
              "avx512_fp16", "amx_tile")


def _cmd(*args) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10, cwd=ROOT).stdout.strip()
    except Exception:
        return ""


@functools.lru_cache(None)
def machine() -> dict:
    model, flags, family = platform.processor(), [], {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("", platform.processor()):
                model = line.split(":", 1)[1].strip()
            key = line.split(":", 1)[0].strip()
            if key in ("cpu family", "model") and key not in family:
                try:
                    family[key] = int(line.split(":", 1)[1])
                except ValueError:
                    pass
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                break
    except OSError:
        pass
    mem = None
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        pass
    return {
        "cpu": model,
        # a hypervisor may name two generations alike ("AMD EPYC"): the family and model tell them apart
        **({"cpu_family": family["cpu family"], "cpu_model": family.get("model")} if "cpu family" in family else {}),
        "cores": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "physical_cores": physical_cores(),
        "simd": [f for f in SIMD_FLAGS if f in flags],
        "memory_gib": round(mem, 1) if mem else None,
        "gpu": gpus(),
        "os": platform.platform(),
        "hostname": platform.node(),
        "hardware": hardware(flags),
    }


def hardware(flags=()) -> dict:
    """The hardware as this process measures it, for the report's *Method and hardware*: the
    clock the kernel reports (cpuinfo's MHz; the maximum where cpufreq gives one), the caches
    (/sys: level, type, size, CPUs sharing one), logical CPUs per physical core, and whether
    it runs under a hypervisor (cpuinfo's flag; the vendor where lscpu names it)."""
    out: dict = {}
    try:
        mhz = [float(line.split(":", 1)[1]) for line in Path("/proc/cpuinfo").read_text().splitlines()
               if line.startswith("cpu MHz")]
        if mhz:
            out["mhz"] = round(max(mhz))
    except (OSError, ValueError):
        pass
    try:
        out["max_mhz"] = round(int(Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
                                   .read_text()) / 1000)
    except (OSError, ValueError):
        pass
    caches = []
    for d in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            caches.append({k: (d / k).read_text().strip()
                           for k in ("level", "type", "size", "shared_cpu_list")})
        except OSError:
            continue
    if caches:
        out["caches"] = caches
    phys = physical_cores()
    logical = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if phys and logical:
        out["threads_per_core"] = round(logical / phys, 2)
    out["hypervisor"] = "hypervisor" in flags
    vendor = next((line.split(":", 1)[1].strip() for line in _cmd("lscpu").splitlines()
                   if line.startswith("Hypervisor vendor")), "")
    if vendor:
        out["hypervisor_vendor"] = vendor
    return out


def physical_cores():
    """Physical cores under the CPUs this process may use (SMT siblings count once), from
    /sys's topology; None where it cannot be read. A taskset slice of two logical CPUs on one
    core is not a 2-core machine."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    seen = set()
    try:
        for c in os.sched_getaffinity(0):
            t = Path(f"/sys/devices/system/cpu/cpu{c}/topology")
            seen.add(((t / "physical_package_id").read_text().strip(), (t / "core_id").read_text().strip()))
    except OSError:
        return None
    return len(seen) or None


def gpus() -> list:
    """The names of the NVIDIA GPUs nvidia-smi lists (none without a driver)."""
    out = _cmd("nvidia-smi", "--query-gpu=name", "--format=csv,noheader")
    return [x.strip() for x in out.splitlines() if x.strip() and "fail" not in x.lower()]


@functools.lru_cache(None)
def software() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "gymnasium", "numba", "torch", "mpi4py", "envpool", "jax", "gymnax",
                "stable-baselines3", "sbx-rl", "cleanrl", "pufferlib"):
        try:
            from importlib.metadata import version
            out[mod] = version(mod)
        except Exception:
            pass
    cxx = _cmd(os.environ.get("CXX", "g++"), "--version").splitlines()
    out["cxx"] = cxx[0] if cxx else None
    return out


@functools.lru_cache(None)
def git_state() -> dict:
    if os.environ.get("STUDY_COMMIT"):
        # a copy of the tree whose git folder is missing or not the tree's own (a lent GPU
        # machine's copy): the commit it was copied from, as the caller says; whether the copy
        # differed is unknown (the rows' source hashes tell the report whether their code matches)
        return {"commit": os.environ["STUDY_COMMIT"], "dirty": None, "commit_from": "STUDY_COMMIT"}
    commit = _cmd("git", "rev-parse", "HEAD")
    # Dirty means the measured code differs from the commit: the bench's own outputs (rows,
    # the rendered report and its figures, the README headline) do not count, so that a
    # bench started after clearing the old results still records a clean tree.
    dirty = bool(_cmd("git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                      *(f":(exclude){p}" for p in GENERATED_PATHS)))
    return {"commit": commit or None, "dirty": dirty}


GENERATED_PATHS = ("results", "report/REPORT.md", "report/figures", "README.md")


def isa_level(m: dict = None) -> str:
    """The widest vector instruction set the native code can use here: the level every
    compiled rung and learner picks at run time ("avx512", "avx2" or "portable")."""
    simd = set((m or machine()).get("simd") or ())
    if {"avx512f", "avx512bw", "avx512vl"} <= simd:
        return "avx512"
    if {"avx2", "fma"} <= simd:
        return "avx2"
    return "portable"


def machine_id(m: dict = None) -> str:
    """A stable folder name for a machine: CPU model, its family and model numbers where
    recorded, cores, memory (GiB, rounded), ISA level. A virtual machine may show two CPU
    generations under one name (two "AMD EPYC" machines with AVX-512 measured FMA peaks 2.3x
    apart, 228 and 532 GFLOP/s at 2 threads), so the family and model go into the name; rows
    recorded before they were (no `cpu_family`) keep the name they had. The cores are those this process may use: a run
    pinned to 2 of 16 cores (taskset) is a 2-core machine's, and its rows do not mix with the
    whole machine's."""
    import re
    m = m or machine()
    cpu = (m.get("cpu") or "unknown-cpu").lower()
    cpu = re.sub(r"\((r|tm)\)|\bcpu\b|@.*$", " ", cpu)
    slug = re.sub(r"[^a-z0-9]+", "-", cpu).strip("-") or "unknown-cpu"
    if m.get("cpu_family") is not None:
        slug += f"-fam{m['cpu_family']}m{m.get('cpu_model', 0)}"
    mem = m.get("memory_gib")
    cores = min(c for c in (m.get("cores"), m.get("affinity")) if c) if m.get("cores") else 0
    out = f"{slug}-{cores}c-{int(round(mem)) if mem else 0}g-{isa_level(m)}"
    gpu = m.get("gpu") or []
    if gpu:        # a GPU machine's learner rows are not a CPU-only machine's (same CPU or not)
        name = re.sub(r"[^a-z0-9]+", "-", gpu[0].lower().replace("nvidia", "")).strip("-")
        out += f"-{len(gpu)}x{name}" if len(gpu) > 1 else f"-{name}"
    return out


def describe(m: dict = None) -> str:
    """One line naming a machine for a report heading: CPU, cores, SIMD."""
    m = m or machine()
    simd = " ".join(x for x in m.get("simd", []) if x.startswith(("avx", "fma")))
    gpu = m.get("gpu") or []
    fam = (f" (family {m['cpu_family']}, model {m.get('cpu_model')})"
           if m.get("cpu_family") is not None else "")
    return (f"{m.get('cpu')}{fam}, {m.get('cores')} cores" + (f", {simd}" if simd else "")
            + (f", GPU {', '.join(gpu)}" if gpu else ""))


def command_line() -> str:
    """The command that wrote a row, as typed (`python -m harness ...`), for the report's
    *Method and hardware*: the interpreter's own path is left out."""
    import shlex
    import sys
    argv = list(getattr(sys, "orig_argv", sys.argv))
    return shlex.join(["python"] + argv[1:])


def provenance() -> dict:
    return {"machine": machine(), "software": software(), "command": command_line(), **git_state()}
