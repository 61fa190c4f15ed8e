"""How much sooner is a DQN agent trained? The arithmetic, from measured rows only.

    total = rounds x (T_gen + T_learn)          generation and learning alternate
    total = rounds x max(T_gen, T_learn)        they overlap (pipelined actor)
    bound = rounds x T_learn                    generation costs nothing

per round of N x T transitions, for a generator (a rung, or a peer's actor loop) and a
learner:
    T_gen   = N*T / (the generator's egreedy throughput at N=20, T=32, best measured setting)
              + the weight push to the actor (set_weights + set_epsilon, measured)
    T_learn = U x (the learner's time per update) + its per-round fixed cost (weights out)
              + storing the round in the replay buffer and the episode bookkeeping (measured)
    rounds  = median rounds to solve over independent seeds (by the contracts every rung
              gives the same batches and every learner the same update, so rounds depend on
              neither; a single run can, through near-ties and rounding)

Nothing here measures; it combines rows of kinds "throughput", "peers", "learner" and
"e2e_costs". Speedups are over the practitioner's loop (Gymnasium's CartPoleVectorEnv with
the PyTorch-eager learner, alternating); the historical baseline (v1) is kept as a row.
"""
from __future__ import annotations

import statistics
from typing import Dict, Iterable, Optional

TRAIN_N, TRAIN_T = 20, 32
PRACTITIONER_PEER = "gym_numpy"          # Gymnasium's CartPoleVectorEnv (NumPy), a PyTorch policy


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

def _shape(r, n_envs, steps):
    return r.get("n_envs") == n_envs and r.get("requested_steps", r.get("steps")) == steps


def generation_times(throughput_rows: Iterable[dict], n_envs: int = TRAIN_N,
                     steps: int = TRAIN_T) -> Dict[str, dict]:
    """Per rung: the best measured egreedy (and random) throughput at the training shape."""
    best: Dict[str, dict] = {}
    for r in throughput_rows:
        if not _shape(r, n_envs, steps) or r.get("policy") not in ("egreedy", "random"):
            continue
        if not r.get("transitions_per_s"):
            continue
        v = best.setdefault(r["version"], {"version": r["version"], "number": r.get("number"),
                                           "title": r.get("title", r["version"]),
                                           "baseline": r.get("baseline", False)})
        cur = v.get(r["policy"])
        if cur is None or r["transitions_per_s"] > cur["transitions_per_s"]:
            v[r["policy"]] = r
    out = {}
    for name, v in best.items():
        if "egreedy" not in v:
            continue
        eg = v["egreedy"]
        out[name] = {
            "version": name, "number": v["number"], "title": v["title"], "baseline": v["baseline"],
            "kind": "rung", "workers": eg.get("workers", 1),
            "egreedy_tps": eg["transitions_per_s"], "t_gen": n_envs * steps / eg["transitions_per_s"],
            "random_tps": v["random"]["transitions_per_s"] if "random" in v else None,
            "t_step": n_envs * steps / v["random"]["transitions_per_s"] if "random" in v else None,
        }
    return out


def peer_generation_times(peer_rows: Iterable[dict], n_envs: int = TRAIN_N,
                          steps: int = TRAIN_T) -> Dict[str, dict]:
    """Per peer: its best measured egreedy actor-loop throughput at the training shape."""
    out: Dict[str, dict] = {}
    for r in peer_rows:
        if r.get("skipped") or r.get("policy") != "egreedy" or not _shape(r, n_envs, steps):
            continue
        tps = r.get("transitions_per_s")
        if not tps:
            continue
        cur = out.get(r["peer"])
        if cur is None or tps > cur["egreedy_tps"]:
            out[r["peer"]] = {"version": r["peer"], "title": r.get("title", r["peer"]), "kind": "peer",
                              "egreedy_tps": tps, "t_gen": n_envs * steps / tps,
                              "workers": r.get("threads", 1)}
    return out


def learner_costs(learner_rows: Iterable[dict]) -> Dict[str, dict]:
    """Per learner: its fastest measured setting (threads), from the newest rows."""
    newest: Dict[tuple, dict] = {}
    for r in learner_rows:
        if "update_s" in r and "learner" in r:
            newest[(r["learner"], r.get("threads", 1), r.get("device", "cpu"))] = r
    out: Dict[str, dict] = {}
    for (name, threads, device), r in newest.items():
        name = name if device == "cpu" else f"{name}@{device}"   # a GPU's row is its own point
        u = r.get("updates_per_round", 128)
        fixed = max(0.0, r.get("round_s", u * r["update_s"]) - u * r["update_s"])
        c = {"learner": name, "title": r.get("title", name), "threads": threads,
             "reference": bool(r.get("reference")), "t_update": r["update_s"],
             "t_round_fixed": fixed, "number": r.get("number")}
        if name not in out or c["t_update"] < out[name]["t_update"]:
            out[name] = c
    return out


def median_rounds(e2e_rows: Iterable[dict]) -> Optional[dict]:
    """Rounds to solve over the solved default-config runs of our loop (e2e rows)."""
    rows = [r for r in e2e_rows if r.get("family") == "ladder" and r.get("label") == "default"
            and r.get("solved") and r.get("rounds")]
    if not rows:
        return None
    rounds = sorted(r["rounds"] for r in rows)
    return {"median": statistics.median(rounds), "min": rounds[0], "max": rounds[-1],
            "n": len(rounds), "updates_per_round": rows[0]["config"]["updates_per_round"]}


def estimate_table(gens: Dict[str, dict], learners: Dict[str, dict], rounds: float,
                   updates_per_round: int, store_s: float, push: Dict[str, float],
                   baseline: Optional[str] = PRACTITIONER_PEER, reference: Optional[str] = None) -> dict:
    """Every generator x learner's estimated time to solve, both modes, and speedups over the
    practitioner's loop (`baseline` with the reference learner, alternating)."""
    ref = reference or next((n for n, c in learners.items() if c["reference"]), None)
    rows = []
    for g in gens.values():
        t_gen = g["t_gen"] + push.get(g["version"], 0.0)
        for lc in learners.values():
            t_learn = learn_time(updates_per_round, lc["t_update"], lc["t_round_fixed"] + store_s)
            rows.append({"generator": g["version"], "gen_title": g["title"], "gen_kind": g["kind"],
                         "gen_baseline": g.get("baseline", False), "learner": lc["learner"],
                         "learner_title": lc["title"], "learner_threads": lc["threads"],
                         "t_gen": t_gen, "t_learn": t_learn,
                         "total_alt_s": rounds * round_time(t_gen, t_learn, False),
                         "total_overlap_s": rounds * round_time(t_gen, t_learn, True),
                         "bound_s": rounds * t_learn,
                         "gen_share_alt": t_gen / (t_gen + t_learn)})
    base = next((r for r in rows if r["generator"] == baseline and r["learner"] == ref), None)
    for r in rows:
        if base:
            r["speedup_alt"] = speedup(base["total_alt_s"], r["total_alt_s"])
            r["speedup_overlap"] = speedup(base["total_alt_s"], r["total_overlap_s"])
    return {"rows": rows, "baseline": base, "rounds": rounds, "updates_per_round": updates_per_round,
            "store_s": store_s, "reference": ref}


def predict_run(rounds: int, t_gen_side: float, updates_per_round: int, t_update: float,
                t_learn_fixed: float, overlap: bool) -> float:
    """The estimate for one actual run, given its own number of rounds."""
    return total_time(rounds, t_gen_side, updates_per_round, t_update, overlap, t_learn_fixed)
