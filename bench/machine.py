#!/usr/bin/env python3
"""The stamp every data file of a benchmark run carries: which machine (the CPU with its family and model,
the ISA, the vCPUs and lscpu's topology, memory, virtualisation), which commit, when, and the run's id.
scripts/bench-report.sh writes it into machine.json and at the head of the accuracy CSVs, and passes the id
and commit to probkit_bench (JSON context) and bench/peers/run.py (peers.json), so that bench/report.py can
refuse files of different runs and say where a kept file comes from.

    python3 bench/machine.py run-id                 a new run id (UTC time + random suffix)
    python3 bench/machine.py commit                 HEAD's short hash, +dirty if the tree has changes outside docs/
    python3 bench/machine.py key                    the machine's folder name under docs/data/machines/ (and its
                                                    page's under docs/benchmarks/), e.g. amd-f25-m1-avx2
    python3 bench/machine.py json --run-id ID --commit C [--quick] [--repetitions N]   machine.json
    python3 bench/machine.py csv --run-id ID --commit C                                the CSVs' header lines
"""
import argparse
import datetime
import json
import os
import platform
import secrets
import subprocess
import sys


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def new_run_id():
    return now().strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def commit():
    """HEAD's short hash, with +dirty when the work tree differs from it anywhere but docs/ (the report's own
    outputs, rewritten by every run): modified, staged or untracked files alike."""
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "?"
    dirty = git("status", "--porcelain", "--untracked-files=normal", "--", ".", ":(exclude)docs")
    return head + ("+dirty" if dirty else "")


def cpuinfo_fields():
    """The first processor's fields in /proc/cpuinfo ({} where there is none)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if not key.strip() and fields:
                    break  # the first processor's block has ended
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


ISA_KEYS = {"AVX-512": "avx512", "AVX2": "avx2", "SSE4": "sse4", "baseline": "baseline"}


def key():
    """Which machine a run's files and page belong to: vendor, CPU family and model, and the widest ISA it
    serves, e.g. amd-f25-m1-avx2 or intel-f6-m167-avx512 (on Arm, the implementer and part). Runs on machines
    of one key replace each other's files; machines of different keys keep a page each."""
    f = cpuinfo_fields()
    vendor = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}.get(f.get("vendor_id", ""), "")
    if vendor:
        name = f"{vendor}-f{f.get('cpu family', 'x')}-m{f.get('model', 'x')}"
    elif f.get("CPU implementer"):
        name = f"{platform.machine()}-{f['CPU implementer']}-{f.get('CPU part', 'x')}"
    else:
        name = platform.machine() or "unknown"
    name = name.lower() + "-" + ISA_KEYS[cpu()[1]]
    return "".join(c if c.isalnum() or c == "-" else "-" for c in name)


def cpu():
    """(model name with family and model, ISA): a virtual machine's model name is often generic ("AMD EPYC");
    family and model say which generation."""
    flags, model, family, number = set(), "", "?", "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name" and not model:
                    model = value
                elif key == "cpu family" and family == "?":
                    family = value
                elif key == "model" and number == "?":
                    number = value
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    model = (model or platform.processor() or "?") + f" (family {family} model {number})"
    isa = ("AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE4" if "sse4_2" in flags
           else "baseline")
    return model, isa


def lscpu():
    """lscpu's fields, as it prints them in the C locale ({} without lscpu)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C")).stdout
    except OSError:
        return {}
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def describe():
    """The machine: CPU, ISA, vCPUs (what the OS schedules on: os.cpu_count()) and the physical topology
    lscpu reports (in a virtual machine, the one the hypervisor presents), memory, virtualisation."""
    model, isa = cpu()
    ls = lscpu()

    def num(key):
        try:
            return int(ls[key])
        except (KeyError, ValueError):
            return None
    topology = {"sockets": num("Socket(s)"), "cores_per_socket": num("Core(s) per socket"),
                "threads_per_core": num("Thread(s) per core")}
    virt = f"virtual machine ({ls['Hypervisor vendor']})" if ls.get("Hypervisor vendor") else ""
    mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    out = {"cpu": model, "isa": isa, "vcpus": os.cpu_count(), "memory_gib": mem, "virtualisation": virt}
    if any(v is not None for v in topology.values()):
        out["topology"] = topology
    return out


def stamp(run_id, commit_):
    """The run's identity: id, commit and date (UTC)."""
    return {"id": run_id, "commit": commit_, "date": now().strftime("%Y-%m-%d %H:%M UTC")}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["run-id", "commit", "key", "json", "csv"])
    p.add_argument("--run-id")
    p.add_argument("--commit")
    p.add_argument("--quick", action="store_true", help="machine.json's note: a --quick run")
    p.add_argument("--repetitions", type=int)
    a = p.parse_args()
    if a.what == "run-id":
        print(new_run_id())
        return
    if a.what == "commit":
        print(commit())
        return
    if a.what == "key":
        print(key())
        return
    run = stamp(a.run_id or new_run_id(), a.commit or commit())
    m = describe()
    if a.what == "csv":
        print(f"# commit: {run['commit']}\n# date: {run['date']}\n# machine: {m['cpu']} ({m['isa']}), "
              f"{m['vcpus']} vCPUs\n# run: {run['id']}")
        return
    note = ("Quick run (--quick): short, smaller, not for quoting." if a.quick else
            "The machine may be shared with other work while it runs; ratios to the same-run probe are the robust "
            "figures.")
    json.dump(dict(m, commit=run["commit"], date=run["date"], run_id=run["id"], repetitions=a.repetitions,
                   note=note), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
