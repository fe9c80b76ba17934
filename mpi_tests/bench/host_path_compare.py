#!/usr/bin/env python3
"""Host-buffer speed with cumpi preloaded beside plain MPI, in one run.

Runs host_path_bench alternately without and with cumpi (plain, cumpi,
plain, ...), so that the machine's noise falls on both alike, takes the
median of each figure over the rounds, and prints per case and size the
ratio against the goals: bandwidth >= 0.98x plain MPI's, latency <= 1.02x,
posting an MPI_Irecv at most 300 ns more.

Two variants: "no-cuda" (a process that never loads CUDA, libcumpi.so) and
"cuda" (a CUDA process with a device receive in flight the whole run; on a
machine without a GPU the device memory is the emulation's, libcumpi_emu.so,
and the process loads no CUDA).

--pairs P measures both sides in one process instead (host_path_bench
--pairs: PMPI_* beside MPI_*, alternating, P pairs per measurement and
round) and takes the median of the pairs' ratios. That cancels the drift
between processes that dominates small calls on a shared machine, and
leaves out what cumpi costs the process as a whole, which the alternating
runs include. With --pairs the variant "unloaded" is also known: the same
process without cumpi, both sides plain MPI, whose ratios show the
method's own spread.

  host_path_compare.py BUILD [--rounds N] [--pairs P] [--variants no-cuda,cuda,unloaded]
                       [--csv FILE] [--mpirun PATH] [--cores 0,1] [-- host_path_bench arguments]
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys

BANDWIDTH_GOAL = 0.98
LATENCY_GOAL = 1.02
POST_GOAL_NS = 300.0


def has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_bench(args, build, preload, bench_args):
    command = [args.mpirun, "-np", "2", "--bind-to", "core", "--mca", "btl", "self,vader"]
    if args.cores:
        command += ["--cpu-set", args.cores]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    if preload:
        command += ["-x", "LD_PRELOAD=" + preload]
    command += [os.path.join(build, "mpi_tests", "host_path_bench")] + bench_args
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit("host_path_compare: the benchmark failed: " + " ".join(command))
    rows = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == 5 and fields[0] == "host":
            rows.setdefault((fields[1], int(fields[2]), fields[3]), []).append(float(fields[4]))
        if len(fields) == 6 and fields[0] == "pair":
            rows.setdefault((fields[1], int(fields[2]), fields[3]), []).append((float(fields[4]), float(fields[5])))
    return rows


def figure_of(metric, plain, cumpi):
    """cumpi against plain MPI: a ratio, or for posting a difference in ns."""
    if metric == "post_ns":
        return cumpi - plain
    if metric == "bandwidth_gbs":
        return cumpi / plain if plain > 0 else 0.0
    return cumpi / plain if plain > 0 else float("inf")


def goal_of(metric, figure):
    """The goal's text, and whether the figure meets it."""
    if metric == "bandwidth_gbs":
        return ">= %.2f" % BANDWIDTH_GOAL, figure >= BANDWIDTH_GOAL
    if metric == "latency_us":
        return "<= %.2f" % LATENCY_GOAL, figure <= LATENCY_GOAL
    return "<= +%d ns" % POST_GOAL_NS, figure <= POST_GOAL_NS


def library_and_args(build, variant, bench_args, gpu):
    """The library to preload ("": none) and the benchmark's arguments on the cumpi side."""
    if variant == "unloaded":
        return "", list(bench_args)
    if variant == "no-cuda":
        return os.path.join(build, "src", "libcumpi.so"), list(bench_args)
    if gpu:
        return os.path.join(build, "src", "libcumpi.so"), list(bench_args) + ["--cuda-context", "1",
                                                                              "--device-in-flight", "1"]
    return os.path.join(build, "src", "libcumpi_emu.so"), list(bench_args) + ["--device-in-flight", "1"]


def compare_in_process(args, build, variant, bench_args):
    gpu = has_gpu()
    library, side_args = library_and_args(build, variant, bench_args, gpu)
    side_args += ["--pairs", str(args.pairs)]
    pairs = {}
    for round_index in range(args.rounds):
        for key, values in run_bench(args, build, library, side_args).items():
            pairs.setdefault(key, []).extend(values)
        sys.stderr.write("host_path_compare: %s round %d of %d done\n" % (variant, round_index + 1, args.rounds))
    results = []
    for (case, size, metric), values in sorted(pairs.items(), key=lambda item: (item[0][0], item[0][1])):
        plain = statistics.median(p for p, _ in values)
        cumpi = statistics.median(c for _, c in values)
        figure = statistics.median(figure_of(metric, p, c) for p, c in values)
        goal, met = goal_of(metric, figure)
        results.append((variant, case, size, metric, plain, cumpi, figure, goal, met))
    return results, gpu


def compare(args, build, variant, bench_args):
    gpu = has_gpu()
    library, cumpi_args = library_and_args(build, variant, bench_args, gpu)
    plain_args = list(bench_args) + (["--cuda-context", "1"] if variant == "cuda" and gpu else [])
    samples = {}
    for round_index in range(args.rounds):
        for side, preload, side_args in (("plain", "", plain_args), ("cumpi", library, cumpi_args)):
            for key, values in run_bench(args, build, preload, side_args).items():
                samples.setdefault(key, {}).setdefault(side, []).extend(values)
        sys.stderr.write("host_path_compare: %s round %d of %d done\n" % (variant, round_index + 1, args.rounds))
    results = []
    for (case, size, metric), sides in sorted(samples.items(), key=lambda item: (item[0][0], item[0][1])):
        if "plain" not in sides or "cumpi" not in sides:
            continue
        plain = statistics.median(sides["plain"])
        cumpi = statistics.median(sides["cumpi"])
        figure = figure_of(metric, plain, cumpi)
        goal, met = goal_of(metric, figure)
        results.append((variant, case, size, metric, plain, cumpi, figure, goal, met))
    return results, gpu


def print_table(results, gpu, rounds, pairs):
    method = ("in one process, median ratio of %d pairs per round over %d rounds" % (pairs, rounds) if pairs
              else "medians of %d alternating rounds" % rounds)
    print("host path, cumpi beside plain MPI (%s; %s)" %
          (method, "GPU machine" if gpu else "no GPU: the cuda variant uses the emulation"))
    header = "%-8s %-18s %10s %-13s %12s %12s %9s %10s %s" % (
        "variant", "case", "bytes", "metric", "plain", "cumpi", "ratio", "goal", "")
    print(header)
    misses = 0
    for variant, case, size, metric, plain, cumpi, figure, goal, met in results:
        misses += 0 if met else 1
        shown = ("%+.0f ns" % figure) if metric == "post_ns" else ("%.3f" % figure)
        print("%-8s %-18s %10d %-13s %12.4g %12.4g %9s %10s %s" % (
            variant, case, size, metric, plain, cumpi, shown, goal, "ok" if met else "MISS"))
    print("%d of %d figures meet their goal" % (len(results) - misses, len(results)))
    return misses


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=0, help="measure in one process, P pairs per round")
    parser.add_argument("--variants", default="no-cuda,cuda")
    parser.add_argument("--csv")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--cores", default="")
    parser.add_argument("--timeout", type=int, default=600, help="seconds for one benchmark run")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    bench_args = argv[split + 1:]
    build = os.path.abspath(args.build)
    results = []
    gpu = False
    for variant in args.variants.split(","):
        if args.pairs > 0:
            variant_results, gpu = compare_in_process(args, build, variant, bench_args)
        elif variant == "unloaded":
            raise SystemExit("host_path_compare: the unloaded variant needs --pairs")
        else:
            variant_results, gpu = compare(args, build, variant, bench_args)
        results += variant_results
    misses = print_table(results, gpu, args.rounds, args.pairs)
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["variant", "case", "bytes", "metric", "plain_median", "cumpi_median", "ratio_or_ns",
                             "goal", "met"])
            for result in results:
                writer.writerow(list(result[:8]) + ["yes" if result[8] else "no"])
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
