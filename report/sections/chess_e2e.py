"""The chess part, continued: chess's network in the learners (this machine, and a GPU's
rows named apart), the poster's round measured inside real runs (generation share per rung,
the trajectory check), and training against the random mover (rows chess_eval,
chess_round_costs, chess_trajectory, chess_train, chess_curve)."""
from __future__ import annotations

import statistics

from core.rung import number_key
from report.context import fmt_time, md_table
from report.data import stale, version_key

ORDER = 61
WORKLOAD = "chess"


def learner_table(c) -> str:
    from report.sections.learners import gpu_machines, gpu_rows
    ver = {r["learner"]: r for r in c.latest("learner_verification", ("learner", "device"))
           if r.get("device") != "cuda"}
    timed = [r for r in c.latest("learner", ("learner", "threads", "device"))
             if "update_spread" in r and r.get("device") != "cuda"]
    if not ver and not timed:
        return ""
    body = []
    for r in sorted(timed, key=lambda r: (number_key(r.get("number", ""), r["learner"]), r["threads"])):
        sp = r["update_spread"]
        body.append((f"`{r['learner']}`" + (" †" if stale(r) else ""), "CPU", str(r["threads"]),
                     ver.get(r["learner"], {}).get("status", "-"),
                     f"{fmt_time(r['update_s'])} [{fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]",
                     f"{r['gflops']:.1f}"))
    for v in ver.values():
        if v["status"] != "passed" and v["learner"] not in {r["learner"] for r in timed}:
            body.append((f"`{v['learner']}`", "CPU", "-", v["status"], "-",
                         str(v.get("reason", ""))[:100].replace("|", "\\|")))
    gpu_line = ""
    for g in gpu_machines(c):
        gv, gt = gpu_rows(g)
        ok = {x["learner"]: x for x in gv}
        base = next((t for t in gt if t.get("device") == "cpu" and t.get("reference")
                     and t["threads"] == 1), None)
        for r in gt:
            if r.get("device") != "cuda":
                continue
            sp = r["update_spread"]
            body.append((f"`{r['learner']}`" + (" †" if stale(r) else ""), f"GPU ({g.machine_line})", "-",
                         ok.get(r["learner"], {}).get("status", "-"),
                         f"{fmt_time(r['update_s'])} [{fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]",
                         f"{r['gflops']:,.0f}"))
        if base:
            gpu_line = (f" On the GPU's machine, L1 on one of its CPU cores takes "
                        f"{fmt_time(base['update_s'])} per update (same run).")
    flops = (timed or [{}])[0].get("flops_per_update")
    return ("### Chess's network in the learners\n\nLEARNER.md's update on chess's Q-network "
            "(1280-256-256-4672, batch 64, the masked Double DQN target; *Another workload's "
            "network*), verified before it is timed: the rows' expansion bit for bit, L1's first "
            "loss against float64 NumPy, every other learner and device against L1 on the CPU. "
            + (f"{flops / 1e6:,.0f} MFLOP an update, counted from the shapes. " if flops else "")
            + "GPU rows come from a machine lent for that stage alone and are named with it."
            + gpu_line + "\n\n"
            + md_table(["Learner", "Device", "Threads", "Verification", "Time per update [IQR]",
                        "GFLOP/s"], body) + "\n")


def round_costs(c) -> str:
    rows = c.latest("chess_round_costs", ("version", "learner"))
    rnd = c.latest("chess_eval", ("role",))
    rr = next((r for r in rnd if r.get("role") == "random_vs_random"), None)
    if not rows and not rr:
        return ""
    out = ["### Chess end to end: the poster's round", ""]
    if rr:
        out += [f"**The starting point.** The uniform-random mover against the uniform-random "
                f"mover scores {rr['score']:.3f} over {rr['games']} games ({rr['wins']} won, "
                f"{rr['draws']} drawn, {rr['losses']} lost; {rr['capped']} stopped by the "
                f"{256}-move cap; as white {rr['score_white']:.3f}, as black "
                f"{rr['score_black']:.3f}), played by `{rr['version']}`. A trained agent's "
                f"score is judged against this.", ""]
    if rows:
        rows = sorted(rows, key=lambda r: version_key(r["version"]))
        cfg = rows[0]["config"]
        body = []
        base = next((r for r in rows if r.get("baseline")), None)
        for r in rows:
            g, l_, s = (r[k]["median"] for k in ("round_gen_s", "round_learn_s", "round_store_s"))
            tot = g + l_ + s
            body.append((f"`{r['version']}`" + (f" ({r['workers']} threads)" if r.get("workers", 1) > 1 else "")
                         + (" †" if stale(r) else ""), f"`{r['learner']}`",
                         f"{fmt_time(g)} [{fmt_time(r['round_gen_s']['q1'])}-{fmt_time(r['round_gen_s']['q3'])}]",
                         fmt_time(l_), fmt_time(s), fmt_time(tot), f"{100 * g / tot:.0f}%",
                         f"{_round(base) / tot:.1f}x" if base else "-"))
        out += [f"Each rung with the reference learner in a real run of {rows[0]['rounds']} rounds "
                f"at the poster's shape: N = {cfg['envs']} games x T = {cfg['steps']} moves = "
                f"{cfg['envs'] * cfg['steps']} transitions a round, then U = "
                f"{cfg['updates_per_round']} updates of batch {cfg['batch_size']} (learning from "
                f"round 1). Medians per round over the run (generation: its IQR in brackets); "
                f"*generate* includes pushing the new weights to the generator, *learn* the U "
                f"updates and fetching the weights. U is declared, not tuned.", "",
                md_table(["Rung", "Learner", "Generate [IQR]", "Learn", "Store", "Round",
                          "Generation share", "Round vs v1"], body), ""]
        if base:
            b = base
            g = b["round_gen_s"]["median"]
            l_ = b["round_learn_s"]["median"]
            out += [f"The poster's row, with this machine's numbers: the practitioner's loop "
                    f"(`{b['version']}` x `{b['learner']}`) spends {fmt_time(g)} generating a batch "
                    f"of {cfg['envs'] * cfg['steps']} against {fmt_time(l_)} learning on it "
                    f"({100 * g / _round(b):.0f}% of the round generating; the poster: 15 s "
                    f"against 0.1 s).", ""]
    traj = c.latest("chess_trajectory", ("version",))
    if traj:
        body = [(f"`{t['version']}`", f"`{t['baseline']}`", t["rounds"], "yes" if t["ok"] else "**no**",
                 "; ".join(t.get("problems") or [])[:160]) for t in traj]
        out += ["**The poster's claim, checked.** The same runs, round by round: each rung's "
                "actions equal the baseline's every round and the learner's losses agree within "
                "LEARNER.md's tolerance, so a run on a slower rung is the faster rung's run at a "
                "higher cost per round, and its time is rounds x its own cost per round.", "",
                md_table(["Rung", "Against", "Rounds compared", "Same trajectory", "Detail"], body), ""]
    return "\n".join(out)


def _round(r) -> float:
    return sum(r[k]["median"] for k in ("round_gen_s", "round_learn_s", "round_store_s"))


def training(c) -> str:
    runs = c.rows("chess_train")
    if not runs:
        return ""
    body = []
    by = {}
    for r in runs:
        by.setdefault((r["version"], r["learner"]), []).append(r)
    for (v, l_), rs in sorted(by.items()):
        best = [r["best_score"] for r in rs if r.get("best_score") is not None]
        reached = [r for r in rs if r.get("reached")]
        cfg = rs[-1]["config"]
        body.append((f"`{v}`", f"`{l_}`", ", ".join(str(r["seed"]) for r in rs),
                     f"{len(reached)}/{len(rs)}", f"{statistics.median(r['rounds'] for r in rs):.0f}",
                     f"{min(best):.3f}-{max(best):.3f}" if best else "-",
                     f"{min(best):.3f}" if best else "-",
                     fmt_time(statistics.median(r["train_s"] for r in rs)),
                     f"U={cfg['updates_per_round']}, lr={cfg['lr']:g}"))
    return ("### Training against the random mover\n\nRuns of `python -m harness chess-train`, "
            "one at a time; the greedy agent scored every few rounds over 400 games against the "
            "random mover (scoring time excluded). The criterion is a score of "
            f"{runs[-1]['config']['criterion']:g}; where no run reaches it, the highest score "
            "that every seed reached is the study's figure, named as such.\n\n"
            + md_table(["Rung", "Learner", "Seeds", "Reached the criterion", "Rounds (median)",
                        "Best score (range over seeds)", "Highest score every seed reached",
                        "Training time (median)", "Settings"], body) + "\n")


def render(ctx):
    c = ctx.for_workload(WORKLOAD)
    parts = [p for p in (learner_table(c), round_costs(c), training(c)) if p]
    return "\n".join(parts)
