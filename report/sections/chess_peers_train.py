"""The chess part, continued: the practitioners' own tools' time to a trained agent (rows
chess_peer_training, written by `python -m harness chess-peers-train`; peers/train/
training/chess_peers.py), beside the study's chess runs."""
from __future__ import annotations

from core.measure import quartiles
from report.context import fmt_time, md_table
from report.data import stale

WORKLOAD = "chess"
KIND = "chess_peer_training"
STALE = " †"


def _long(s) -> str:
    return "-" if s is None else (f"{s / 60:.1f} min" if s >= 600 else fmt_time(s))


def complete_runs(rows) -> set:
    """The runs that trained a peer and ended: every entry of the run has as many seeds as its
    most-seeded one, and every peer its rows say was planned has rows (a run stopped part-way,
    or one that trained only the study's pair, is left out; its rows stay in results/)."""
    by_run = {}
    for r in rows:
        key = r["peer"] if r.get("family") == "peer" else r.get("entry")
        by_run.setdefault(r["run_id"], {}).setdefault(key, set()).add(r.get("seed"))
    planned = {}
    for r in rows:
        planned.setdefault(r["run_id"], set()).update(r.get("planned_peers") or ())
    return {rid for rid, entries in by_run.items()
            if any(r.get("family") == "peer" for r in rows if r["run_id"] == rid)
            and len({len(s) for s in entries.values()}) == 1 and planned[rid] <= set(entries)}


def groups(c) -> dict:
    """entry -> the rows of its newest complete run (complete_runs; a peer's name, or 'rung x
    learner' for ours)."""
    out = {}
    rows = c.rows(KIND)
    done = complete_runs(rows)
    for r in rows:
        if r["run_id"] not in done:
            continue
        out.setdefault(r["peer"] if r.get("family") == "peer" else r.get("entry"), []).append(r)
    for k, rows in out.items():
        newest = max(r["run_id"] for r in rows)
        out[k] = [r for r in rows if r["run_id"] == newest]
    return out


def summary(rows) -> dict:
    ok = [r for r in rows if r.get("status") in ("reached", "not_reached")]
    reached = [r for r in ok if r.get("reached")]
    times = [r["time_to_criterion_s"] for r in reached]
    return {"ok": ok, "reached": reached, "all": bool(ok) and len(reached) == len(ok),
            "q": quartiles(times) if times else None,
            "best": max((r["best_score"] for r in ok if r.get("best_score") is not None), default=None),
            "budget": max((r["budget_s"] for r in ok), default=None)}


def time_cell(s) -> str:
    if not s["ok"]:
        return "-"
    if s["all"]:
        q1, med, q3 = s["q"]
        return f"{_long(med)} [{_long(q1)}-{_long(q3)}]"
    part = f" ({len(s['reached'])}/{len(s['ok'])} seeds reached it)" if s["reached"] else ""
    return f"did not reach within {_long(s['budget'])}, best score {s['best']:.3f}{part}"


def ratio_cell(s, ours) -> str:
    """Peer / ours, both from one run; a peer that did not reach gives a lower bound."""
    if ours is None or not ours["all"] or not s["ok"]:
        return "-"
    base = ours["q"][1]
    if s["all"]:
        return f"{s['q'][1] / base:,.0f}x"
    return f"> {s['budget'] / base:,.0f}x (budget / ours)"


def _median_or_inf(s) -> float:
    """A peer's median time to 0.75 over its seeds, a seed that did not reach it counted as
    never (infinite): the median is finite only where most seeds reached it."""
    import statistics
    return statistics.median(r["time_to_criterion_s"] if r.get("reached") else float("inf") for r in s["ok"])


def target_line(g: dict, label: str = "**Target**") -> str:
    """The peers' target, from the newest complete run that trained the study's pair and a
    peer: the pair reaches 0.75 at least 100x sooner than the quickest peer, or no peer
    reaches it within 100x the pair's median (its budget then bounds the ratio)."""
    runs: dict = {}
    for key, rows in g.items():
        runs.setdefault(rows[0]["run_id"], []).append((key, rows))
    both = [rid for rid, es in runs.items() if {rs[0].get("family") for _, rs in es} >= {"ladder", "peer"}]
    if not both:
        return ""
    rid = max(both)
    pair_key, pair = next((k, summary(rs)) for k, rs in runs[rid] if rs[0].get("family") == "ladder")
    peers = [(k, summary(rs)) for k, rs in runs[rid] if rs[0].get("family") == "peer"]
    peers = [(k, s) for k, s in peers if s["ok"]]
    if not pair["all"] or not peers:
        return ""
    base = pair["q"][1]
    ratios = []
    for k, s in peers:
        med = _median_or_inf(s)
        ratios.append((med / base if med != float("inf") else s["budget"] / base, med == float("inf"), k, s))
    x, bound, k, s = min(ratios, key=lambda t: (t[0], -(t[3]['best'] or 0)))   # a tie: the nearer best score
    what = (f"did not reach 0.75 within its budget of {_long(s['budget'])} ({x:,.0f}x the pair's median; best "
            f"score {s['best']:.3f})" if bound else f"reached it in a median {_long(_median_or_inf(s))}, {x:,.0f}x later")
    from report.data import stale
    old = [key for key, rows in runs[rid] if any(stale(r) for r in rows)]
    since = (f" (†: the rows of {', '.join(f'`{o}`' for o in old)} were measured before the code they ran last "
             "changed)") if old else ""
    mark = lambda key: f"`{key}`" + (" †" if key in old else "")
    return (f"{label} (the study's chess pair and recipe reach 0.75 at least 100x sooner than the quickest "
            f"peer, or no peer reaches it within 100x the pair's time; run {rid}): "
            f"{'**met**' if x >= 100 else '**not met**'}. {mark(pair_key)} reached 0.75 in a median "
            f"{_long(base)} over {len(pair['ok'])} seeds; the quickest peer, {mark(k)}, {what}{since}.")


def ours_sets(rows) -> str:
    """--ours-recipe and --ours-set options that give the study's pair's run its settings."""
    r0 = next((r for r in rows if r.get("config")), None)
    if not r0:
        return ""
    cfg, recipe = r0["config"], r0.get("recipe")
    from dataclasses import fields, replace
    from training.chess import ChessTrainConfig
    d = ChessTrainConfig()
    if recipe:
        try:
            from training.chess_algorithm import settings
            d = replace(d, **settings(recipe))
        except Exception:              # the recipe is gone: every setting said outright
            recipe = None
    skip = {"version", "learner", "budget_s", "eval_games", "seed", "max_rounds", "workers", "threads", "eval_every"}
    return (f" --ours-recipe {recipe}" if recipe else "") + "".join(
                   f" --ours-set {f.name}={cfg[f.name]:g}" if isinstance(cfg[f.name], float)
                   else f" --ours-set {f.name}={cfg[f.name]}" for f in fields(ChessTrainConfig)
                   if f.name in cfg and f.name not in skip and cfg[f.name] != getattr(d, f.name))


def _ok(rows) -> dict:
    return next((r for r in rows if r.get("status") in ("reached", "not_reached")), rows[0])


def every_steps(r) -> int:
    """Env steps between scorings (the study's pair's row: its rounds' transitions)."""
    cfg = r.get("config") or {}
    return r.get("eval_every") or cfg.get("eval_every", 0) * cfg.get("envs", 0) * cfg.get("steps", 0)


def command(rows) -> str:
    """The command that wrote one run's rows (its peers, and the study's pair if it ran)."""
    peers = list(dict.fromkeys(r["peer"] for r in rows if r.get("family") == "peer"))
    ours = [r for r in rows if r.get("family") == "ladder"]
    r0 = _ok(rows)
    seeds = sorted({r["seed"] for r in rows if r.get("seed") is not None})
    return ("`python -m harness chess-peers-train" + "".join(f" --peer {p}" for p in peers)
            + f" --first-seed {seeds[0]} --seeds {len(seeds)} --budget {budget_option(r0)}"
            f" --eval-every {every_steps(r0)} --games {r0.get('eval_games')} --version "
            f"{r0.get('version')}" + (f" --ours {ours[0].get('learner')}" if ours else "")
            + ours_sets(ours) + "`")


def budget_option(r0) -> str:
    """--budget's value, and --budget-x's where the peers' budget was a multiple of the pair's time."""
    if r0.get("budget_x"):
        return f"{r0.get('ours_budget_s', 0):g} --budget-x {r0['budget_x']:g}"
    return f"{r0.get('budget_s', 0):g}"


def settings_line(key, r0) -> str:
    if r0.get("hyperparameters"):
        hp = r0["hyperparameters"]
        return (f"`{key}`: {r0.get('env')}; {r0.get('hyperparameters_source')}: "
                + ", ".join(f"{k} {v}" for k, v in hp.items()))
    cfg = r0.get("config")
    if not cfg:
        return ""
    recipe = f" (the recipe `{r0['recipe']}`)" if r0.get("recipe") else ""
    return (f"`{key}`: `training/chess.py`'s DQN{recipe}, N = {cfg['envs']} games x T = "
            f"{cfg['steps']} moves a round, U = {cfg['updates_per_round']}, batch "
            f"{cfg['batch_size']}, {cfg['hidden']} hidden units, gamma {cfg.get('gamma', 0.99):g}, "
            f"lr {cfg['lr']:.3g}, epsilon {cfg['eps_start']:g} to {cfg['eps_end']:g} over "
            f"{cfg['eps_decay_rounds']} rounds, {cfg.get('workers', 1)} generator thread(s), "
            f"{cfg.get('threads', 1)} learner thread(s), "
            f"scored every {cfg['eval_every']} rounds")


def render_rows(c, g: dict) -> str:
    """One table row per peer and per study's pair (each its newest run); a peer's ratio is to
    the study's pair of its own run, when that run trained one."""
    ours_by_run = {rows[0]["run_id"]: summary(rows) for rows in g.values()
                   if rows[0].get("family") == "ladder"}
    order = sorted(g, key=lambda k: g[k][0].get("family") == "ladder")      # peers first
    body, settings, skipped = [], [], []
    for key in order:
        rows = g[key]
        r0, s = _ok(rows), summary(rows)
        if not s["ok"]:
            skipped.append(f"`{key}`: {r0.get('status')}, {r0.get('reason')}")
            continue
        vers = r0.get("versions") or {}
        lib = ", ".join(f"{k} {v}" for k, v in vers.items() if v and k not in ("numpy", "gymnasium", "chess"))
        steps = "env_steps" if "env_steps" in r0 else "transitions"
        if r0.get("family") == "ladder":
            ratio = "-"
        elif r0["run_id"] in ours_by_run:
            ratio = ratio_cell(s, ours_by_run[r0["run_id"]])
        else:
            ratio = "- (no pair in its run)"
        body.append((f"`{key}`" + (STALE if any(stale(r) for r in rows) else ""),
                     lib or f"this project (`{r0.get('learner')}`)",
                     ", ".join(str(r["seed"]) for r in s["ok"]), time_cell(s),
                     ", ".join(f"{r['best_score']:.3f}" for r in s["ok"]),
                     f"{sorted(r.get(steps, 0) for r in s['ok'])[len(s['ok']) // 2]:,}", ratio))
        line = settings_line(key, r0)
        if line:
            settings.append(line)
    if not body and not skipped:
        return ""
    runs = {}
    for key in order:
        runs.setdefault(g[key][0]["run_id"], []).extend(g[key])
    newest = _ok(runs[max(runs)])
    cmds = "; ".join(f"{command(rows)} (run {run})" for run, rows in sorted(runs.items()))
    out = ["### " + c.heading("Chess in the practitioner's own tools: time to 0.75"), "",
           f"{cmds}: one run at a time, seeds never used to choose settings. Each peer trains "
           f"with its own library against the uniform-random mover and is scored as the study's "
           f"chess runs are (`training/chess.py`): the deterministic policy plays "
           f"{newest.get('eval_games')} games, both colours, against the random mover, in the games "
           f"of the `evaluate` seeds, stepped by `{newest.get('version')}` (verified against "
           f"python-chess); win 1, draw or the move cap 1/2, loss 0. A scoring every "
           f"{every_steps(newest):,} env steps and at the end, its time taken out of the "
           f"training time; trained at the first scoring at 0.75 or more. Time to 0.75: median "
           f"[IQR] of training seconds over the seeds. The ratio is the peer's median over the "
           f"study's pair's, both from one run (a peer that did not reach 0.75: its budget "
           f"over the pair's median, a lower bound). The settings, the rule differences and the "
           f"other masked-action trainers looked at (and why they are not rows): "
           f"[peers/train/NOTES.md](../peers/train/NOTES.md).", "",
           md_table(["Run", "Library", "Seeds", "Time to 0.75 [IQR]", "Best score per seed",
                     "Steps (median; ours: transitions)", "vs the study's pair"], body)]
    target = target_line(g)
    if target:
        out += ["", target]
    if any(STALE in row[0] for row in body):
        out += ["", "† code the row hashes has changed since it was measured."]
    if settings:
        out += ["", "Settings. " + " ".join(s + "." for s in settings)]
    if skipped:
        out += ["", "Not run: " + "; ".join(skipped) + "."]
    fig = curve_figure(c, g)
    if fig:
        out += ["", f"![Chess peers' score against the random mover]({fig})"]
    return "\n".join(out) + "\n"


def curve_figure(c, g):
    pts = [(k, r) for k, rows in g.items() for r in rows if r.get("curve")]
    if not pts:
        return None
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    names = list(dict.fromkeys(k for k, _ in pts))
    for k, r in pts:
        i = names.index(k)
        xs = [p["train_s"] for p in r["curve"]]
        ys = [p["score"] for p in r["curve"]]
        first = r is next(rr for kk, rr in pts if kk == k)
        ax.plot(xs, ys, marker="os^v"[i % 4], ms=3, color=f"C{i}", alpha=0.7, label=k if first else None)
    ax.axhline(0.75, color="k", lw=0.8, ls="--", label="criterion")
    ax.axhline(0.5, color="grey", lw=0.8, ls=":", label="random vs random (about 0.5)")
    xs = [p["train_s"] for _, r in pts for p in r["curve"] if p["train_s"] > 0]
    log = bool(xs) and max(xs) > 20 * min(xs)      # the study's pair ends long before a peer's budget
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("training seconds (scoring excluded" + ("; log scale)" if log else ")"))
    ax.set_ylabel("score against the random mover")
    ax.set_ylim(0, 1)
    ax.set_title(f"one line per seed ({c.machine_line})", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return c.savefig(fig, "chess_peers_training_curve")


def render(ctx):
    c = ctx.for_workload(WORKLOAD)
    g = groups(c)
    return render_rows(c, g) if g else ""
