"""Scaling with workers, and throughput against N (where parallelism starts to pay): the
CartPole part's section, and the same view of another workload's rungs inside its own part
(`scaling(ctx, level, prefix)`, with that workload's context)."""
from collections import defaultdict

import matplotlib.pyplot as plt

from report.context import fmt_si, md_table
from report.data import version_key



def worker_rows(ctx):
    """{(version, policy, n): {workers: row}} for parallel versions."""
    out = defaultdict(dict)
    for r in ctx.throughput():
        if r.get("parallel") and r.get("requested_steps", r["steps"]) == 32:
            out[(r["version"], r["policy"], r["n_envs"])][r["workers"]] = r
    return out


def sweep_series(ctx, policy, serial_ns=None):
    """{version: {N: tps}} at T=32; parallel versions at 2 workers (1 when N=1). N where a
    parallel rung's calls actually ran on one thread go into serial_ns[version]."""
    out = defaultdict(dict)
    for r in ctx.throughput():
        if r["policy"] != policy or r.get("requested_steps", r["steps"]) != 32:
            continue
        if r.get("parallel") and r["workers"] != min(2, r["n_envs"]):
            continue
        out[r["version"]][r["n_envs"]] = r["transitions_per_s"]
        if serial_ns is not None and r.get("parallel") and r.get("workers_used") == 1 and r["workers"] > 1:
            serial_ns.setdefault(r["version"], []).append(r["n_envs"])
    return out


def serial_baseline(name, names, parallel):
    """The nearest rung below `name` that has no parallelism (when the rung declares no
    SERIAL_BASE of its own)."""
    below = [v for v in names if version_key(v) < version_key(name) and not parallel.get(v)]
    return max(below, key=version_key) if below else None


def crossover(par, base):
    """Smallest N from which `par` beats `base` at every larger measured N."""
    ns = sorted(set(par) & set(base))
    for i, n in enumerate(ns):
        if all(par[m] > base[m] for m in ns[i:]):
            return n, ns
    return None, ns


def log_axes(ax, xlabel, title, legend_size):
    """Log-log axes (base 2 on x) with the labels and grid both figures share."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("transitions / s")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    if legend_size and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=legend_size)


def scaling(ctx, level: str = "##", prefix: str = ""):
    """The section at heading `level`; `prefix` names its figures apart (another workload)."""
    sub = level + "#"
    parts = [f"{level} Scaling", ""]
    wr = worker_rows(ctx)
    if wr:
        body = []
        for (v, p, n), d in sorted(wr.items(), key=lambda kv: (version_key(kv[0][0]), kv[0][1], kv[0][2])):
            if len(d) < 2 or 1 not in d:
                continue
            one = d[1]["transitions_per_s"]
            cells = ", ".join(f"{w}: {d[w]['transitions_per_s'] / one:.2f}x"
                              + (f" (ran on {d[w]['workers_used']})"
                                 if d[w].get("workers_used") not in (None, w) else "")
                              for w in sorted(d))
            body.append((f"`{v}`", p, n, fmt_si(one), cells))
        if body:
            parts += [f"{sub} With workers", "",
                      "Throughput with P workers (processes, threads or ranks) relative to 1, at T=32. "
                      "The machine has the core count given above: beyond it, workers share cores "
                      "(the figure: speedup on linear axes, the ideal line and the core count marked).", "",
                      md_table(["Version", "Policy", "N", "1 worker (transitions/s)", "speedup by workers"], body), ""]
            fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
            cores = ctx.machine_info.get("affinity") or ctx.machine_info.get("cores")
            color, top = {}, 1
            for ax, p in zip(axes, ("random", "egreedy")):
                for (v, pol, n), d in sorted(wr.items(), key=lambda kv: version_key(kv[0][0])):
                    if pol != p or n != 4096 or len(d) < 2 or 1 not in d:
                        continue
                    ws = sorted(d)
                    top = max(top, ws[-1])
                    color.setdefault(v, f"C{len(color) % 10}")
                    ax.plot(ws, [d[w]["transitions_per_s"] / d[1]["transitions_per_s"] for w in ws], "o-",
                            color=color[v], label=v)
                ax.plot([1, top], [1, top], ls="--", color="0.5", lw=0.8, label="ideal (speedup = workers)")
                if cores:
                    ax.axvline(cores, color="k", ls=":", lw=0.8, label=f"the machine's {cores} cores")
                ax.set_xlabel("workers")
                ax.set_ylabel("speedup over 1 worker")
                ax.set_title(f"{p}, N=4096, T=32")
                ax.set_xlim(0.8, top + 0.2)
                ax.set_ylim(0, top + 0.2)
                ax.grid(alpha=0.3)
            fig.tight_layout()
            labels = {}
            for ax in axes:                   # one legend for the row: the rungs of both panels
                for h, lab in zip(*ax.get_legend_handles_labels()):
                    labels.setdefault(lab, h)
            fig.legend(list(labels.values()), list(labels), fontsize=7, loc="upper left",
                       bbox_to_anchor=(1.0, 0.95))
            parts += [f"![Scaling with workers]({ctx.savefig(fig, prefix + 'scaling_workers')})", ""]
    parallel = {r["version"]: r.get("parallel") for r in ctx.throughput()}
    declared = {r["version"]: r.get("serial_base") for r in ctx.throughput() if r.get("serial_base")}
    texts = []
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    drew = False
    color = {}                       # one colour per rung in both panels; one legend, outside
    for ax, p in zip(axes, ("random", "egreedy")):
        serial_ns = {}
        series = sweep_series(ctx, p, serial_ns)
        for v in sorted(series, key=version_key):
            pts = sorted(series[v].items())
            if len(pts) < 3:
                continue
            drew = True
            color.setdefault(v, f"C{len(color) % 10}")
            ax.plot([n for n, _ in pts], [t for _, t in pts], "o-" if not parallel.get(v) else "s--",
                    color=color[v], label=v + (" (2 workers)" if parallel.get(v) else ""))
        log_axes(ax, "N environments", f"{p}, T=32", None)
        names = list(series)
        for v in sorted(series, key=version_key):
            if not parallel.get(v):
                continue
            b = declared.get(v) if declared.get(v) in series else serial_baseline(v, names, parallel)
            if not b:
                continue
            n, ns = crossover(series[v], series[b])
            if len(ns) < 3:
                continue
            if serial_ns.get(v):
                one = sorted(serial_ns[v])
                texts.append(f"- `{p}`: `{v}` asked for 2 workers but ran on one thread at N="
                             f"{', '.join(map(str, one))} (its calls below a size threshold stay "
                             "serial: the row's workers_used); there the comparison is serial code "
                             "against serial code.")
            if n is None:
                texts.append(f"- `{p}`: `{v}` with 2 workers never overtakes `{b}` at the measured N "
                             f"({ns[0]}..{ns[-1]}).")
            elif n == ns[0]:
                texts.append(f"- `{p}`: `{v}` with 2 workers is ahead of `{b}` already at N={n}.")
            else:
                texts.append(f"- `{p}`: `{v}` with 2 workers overtakes `{b}` from N={n} on "
                             f"(crossover between N={ns[ns.index(n) - 1]} and N={n}).")
    if drew:
        fig.tight_layout()
        labels = {}
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                labels.setdefault(lab, h)
        fig.legend(list(labels.values()), list(labels), fontsize=7, loc="upper left",
                   bbox_to_anchor=(1.0, 0.95))
        parts += [f"{sub} Throughput against N", "",
                  "Each rung at T=32 over N from 1 to 4096 (parallel rungs with 2 workers). "
                  "Where a parallel rung's line crosses the serial rung it parallelises "
                  "(its SERIAL_BASE) is where its "
                  "overhead (process wake-up, synchronisation, thread start) is paid for:", "",
                  "\n".join(texts) if texts else "- no parallel rung with a serial baseline measured yet.", "",
                  f"![Throughput against N]({ctx.savefig(fig, prefix + 'throughput_vs_n')})", ""]
    else:
        plt.close(fig)
    if len(parts) == 2:
        return "" if prefix else f"{level} Scaling\n\nNo worker or N-sweep rows in results/ yet.\n"
    return "\n".join(parts)
