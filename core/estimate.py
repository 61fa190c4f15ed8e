"""How much sooner is a DQN agent trained? The arithmetic, from measured rows only.

    total = rounds x (T_gen + T_learn)          generation and learning alternate
    total = rounds x max(T_gen, T_learn)        they overlap (pipelined actor)
    bound = rounds x T_learn                    generation costs nothing

where, per round of N x T transitions,
    T_gen   = N*T / (egreedy throughput of the rung, best measured worker count)
              + the rung's set_weights/set_epsilon (the weight push lands on the actor)
    T_learn = U x T_update + buffer store + episode bookkeeping + weights to NumPy
    rounds  = median rounds to solve over independent seeds (sample complexity: by the
              contract every rung produces the same batches, so it does not depend on the rung)

The end-to-end speedup of a rung is v1's alternating total over the rung's total (both
modes against the same baseline: v1 with generation and learning taking turns).
Nothing here measures; it only combines rows of kinds "throughput", "train" and "learner".
"""
from __future__ import annotations

import statistics
from typing import Dict, Iterable, List, Optional

TRAIN_N, TRAIN_T = 20, 32


def round_time(t_gen: float, t_learn: float, overlap: bool) -> float:
    if t_gen < 0 or t_learn < 0:
        raise ValueError("times must be non-negative")
    return max(t_gen, t_learn) if overlap else t_gen + t_learn


def learn_time(updates_per_round: int, t_update: float, t_round_fixed: float = 0.0) -> float:
    """Learner-side time of one round: U updates plus the per-round fixed costs."""
    if updates_per_round < 0 or t_update < 0 or t_round_fixed < 0:
        raise ValueError("updates and times must be non-negative")
    return updates_per_round * t_update + t_round_fixed


def total_time(rounds: float, t_gen: float, updates_per_round: int, t_update: float,
               overlap: bool, t_round_fixed: float = 0.0) -> float:
    if rounds < 0:
        raise ValueError("rounds must be non-negative")
    return rounds * round_time(t_gen, learn_time(updates_per_round, t_update, t_round_fixed), overlap)


def bound_time(rounds: float, updates_per_round: int, t_update: float,
               t_round_fixed: float = 0.0) -> float:
    """Training time if generation cost nothing: the learner alone."""
    return rounds * learn_time(updates_per_round, t_update, t_round_fixed)


def speedup(baseline_s: float, s: float) -> float:
    return baseline_s / s if s > 0 else float("inf")


# --------------------------------------------------------------------------- inputs from rows

def generation_times(throughput_rows: Iterable[dict], n_envs: int = TRAIN_N,
                     steps: int = TRAIN_T) -> Dict[str, dict]:
    """Per version: the best measured egreedy and random throughput at the training shape."""
    best: Dict[str, dict] = {}
    for r in throughput_rows:
        if r.get("n_envs") != n_envs or r.get("requested_steps", r.get("steps")) != steps:
            continue
        pol = r.get("policy")
        if pol not in ("egreedy", "random") or not r.get("transitions_per_s"):
            continue
        v = best.setdefault(r["version"], {"version": r["version"], "number": r.get("number"),
                                           "title": r.get("title", r["version"])})
        cur = v.get(pol)
        if cur is None or r["transitions_per_s"] > cur["transitions_per_s"]:
            v[pol] = r
    out = {}
    for name, v in best.items():
        if "egreedy" not in v:
            continue
        eg = v["egreedy"]
        out[name] = {
            "version": name, "number": v["number"], "title": v["title"],
            "workers": eg.get("workers", 1),
            "egreedy_tps": eg["transitions_per_s"],
            "t_gen": n_envs * steps / eg["transitions_per_s"],
            "random_tps": v["random"]["transitions_per_s"] if "random" in v else None,
            "t_step": n_envs * steps / v["random"]["transitions_per_s"] if "random" in v else None,
        }
    return out


def newest_run(rows: List[dict], **match) -> List[dict]:
    """Rows matching `match` from the newest run_id that has any."""
    sel = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    if not sel:
        return []
    run = sel[-1].get("run_id")
    return [r for r in sel if r.get("run_id") == run]


def sample_complexity(train_rows: List[dict]) -> Optional[dict]:
    """Median and spread of rounds/updates/transitions to solve, newest sample-complexity run."""
    rows = [r for r in newest_run(train_rows, role="sample_complexity") if "rounds" in r]
    if not rows:
        return None
    solved = [r for r in rows if r.get("solved")]
    # an unsolved seed counts with the rounds it ran (its cap): censored, so the median is
    # then a lower bound, and the row says how many seeds solved
    use = rows
    rounds = sorted(r["rounds"] for r in use)
    cfg = rows[0]["config"]
    return {
        "seeds": len(rows), "solved": len(solved),
        "rounds_median": statistics.median(rounds), "rounds_min": rounds[0], "rounds_max": rounds[-1],
        "rounds": rounds,
        "updates_per_round": cfg["updates_per_round"],
        "updates_median": statistics.median(r["updates"] for r in use),
        "transitions_median": statistics.median(r["transitions"] for r in use),
        "wall_median_s": statistics.median(r["wall_s"] for r in use),
        "version": cfg["version"], "config": cfg,
        "reduced": rows[0].get("reduced"),
    }


def learner_costs(learner_rows: List[dict]) -> Optional[dict]:
    """The newest learner-cost row, with the per-round fixed cost split by side."""
    rows = [r for r in learner_rows if "update_s" in r]
    if not rows:
        return None
    r = rows[-1]
    return {
        "row": r, "t_update": r["update_s"], "device_name": r.get("device_name", r.get("device")),
        "device": r.get("device"),
        "t_learn_fixed": r.get("store_round_s", 0.0) + r.get("weights_to_numpy_s", 0.0),
        "push": {k: v.get("set_weights_s", 0.0) for k, v in r.get("push_by_version", {}).items()
                 if isinstance(v, dict)},
    }


def e2e_table(throughput_rows: List[dict], train_rows: List[dict], learner_rows: List[dict],
              baseline: str = "v1_python") -> dict:
    """Every rung's estimated end-to-end training time, both modes, and the bound.

    Returns {"rows": [...], "missing": reason or None, "inputs": {...}}.
    """
    gens = generation_times(throughput_rows)
    sc = sample_complexity(train_rows)
    lc = learner_costs(learner_rows)
    missing = []
    if not gens:
        missing.append("no egreedy throughput rows at N=20, T=32")
    if sc is None:
        missing.append("no sample-complexity rows (kind train)")
    if lc is None:
        missing.append("no learner-cost rows (kind learner)")
    if baseline not in gens:
        missing.append(f"no egreedy throughput row for the baseline {baseline}")
    if missing:
        return {"rows": [], "missing": "; ".join(missing), "inputs": {}}
    R, U, tu = sc["rounds_median"], sc["updates_per_round"], lc["t_update"]
    fixed = lc["t_learn_fixed"]

    def gen_side(name):
        return gens[name]["t_gen"] + lc["push"].get(name, 0.0)

    base_alt = R * round_time(gen_side(baseline), learn_time(U, tu, fixed), False)
    bound = bound_time(R, U, tu, fixed)
    rows = []
    for name, g in sorted(gens.items(), key=lambda kv: _num_key(kv[1]["number"], kv[0])):
        tg = gen_side(name)
        alt = R * round_time(tg, learn_time(U, tu, fixed), False)
        ovl = R * round_time(tg, learn_time(U, tu, fixed), True)
        rows.append({
            **g, "t_gen_side": tg, "push_measured": name in lc["push"],
            "gen_speedup": g["egreedy_tps"] / gens[baseline]["egreedy_tps"],
            "total_alt_s": alt, "total_overlap_s": ovl,
            "speedup_alt": speedup(base_alt, alt), "speedup_overlap": speedup(base_alt, ovl),
            "gen_share_alt": tg / (tg + learn_time(U, tu, fixed)),
        })
    return {"rows": rows, "missing": None,
            "inputs": {"rounds": R, "updates_per_round": U, "t_update": tu, "t_learn_fixed": fixed,
                       "t_learn": learn_time(U, tu, fixed), "bound_s": bound,
                       "bound_speedup": speedup(base_alt, bound), "baseline_alt_s": base_alt,
                       "sample_complexity": sc, "learner": lc}}


def speedup_curve(t_gen_base: float, t_gen: float, rounds: float, updates_per_round: int,
                  t_updates: Iterable[float], overlap: bool, t_round_fixed: float = 0.0) -> List[float]:
    """End-to-end speedup of a rung over the baseline (alternating) as the learner's
    per-update time varies; rounds cancel but are kept for clarity."""
    out = []
    for tu in t_updates:
        base = total_time(rounds, t_gen_base, updates_per_round, tu, False, t_round_fixed)
        out.append(speedup(base, total_time(rounds, t_gen, updates_per_round, tu, overlap, t_round_fixed)))
    return out


def predict_run(rounds: int, t_gen_side: float, updates_per_round: int, t_update: float,
                t_learn_fixed: float, overlap: bool) -> float:
    """The estimate for one actual run, given its own number of rounds."""
    return total_time(rounds, t_gen_side, updates_per_round, t_update, overlap, t_learn_fixed)


def _num_key(number, name):
    s = str(number or "")
    digits = "".join(c for c in s if c.isdigit())
    return (int(digits) if digits else 10**6, s, name)
