"""The infos dict of a ladder vector env's step() (CartPole's RungVectorEnv, chess's client),
built with array operations, only on steps where episodes end (on other steps infos is {} as
in SyncVectorEnv).

Same-step autoreset (SyncVectorEnv, AutoresetMode.SAME_STEP):
    final_obs    object array [N]: the final observation (float32 [4]) where an episode
                 ended, None elsewhere;  _final_obs: bool mask
    final_info   {} (CartPole's step info is empty);  _final_info: the same mask
Episode statistics (gymnasium.wrappers.vector.RecordEpisodeStatistics's format):
    episode      {"r": float64 [N] returns, "l": int64 [N] lengths, "t": float64 [N]
                 seconds since the episode began, rounded to 1 us}, zero where no episode
                 ended;  _episode: bool mask
Next-step and disabled autoreset add nothing else (CartPole's infos are empty).

Gymnasium's RecordEpisodeStatistics refuses to wrap an env whose infos already hold
"episode" (ValueError at the first episode end). Loops written for Gymnasium wrap their
vector env in it, so that they run unchanged the env leaves the key to such a wrapper:
wrapped_by_stats_recorder() walks the few frames above step() for
RecordEpisodeStatistics.step of a wrapper around this very env.
"""
from __future__ import annotations

import sys
import time

import numpy as np

try:
    from gymnasium.wrappers.vector import RecordEpisodeStatistics as _RES
    _RES_STEP = _RES.step.__code__
except (ImportError, AttributeError):  # pragma: no cover - gymnasium 1.3 has it
    _RES_STEP = None

STATS_KEY = "episode"


def same_step_infos(n: int, done: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> dict:
    """final_obs / final_info of SyncVectorEnv's same-step mode. rows: float32 [len(idx), 4],
    a fresh array (its rows become the final_obs entries, as views)."""
    final = np.empty(n, dtype=object)             # filled with None
    final[idx] = np.fromiter(rows, dtype=object, count=len(idx))
    return {"final_obs": final, "_final_obs": done, "final_info": {}, "_final_info": done.copy()}


def add_episode_stats(infos: dict, n: int, done: np.ndarray, idx: np.ndarray,
                      lengths: np.ndarray, t_start: np.ndarray, now: float) -> None:
    """infos["episode"], infos["_episode"] for the episodes ending at `idx` (lengths: theirs;
    CartPole-v1 pays 1 a step, so the return is the length). t_start[idx] is restarted."""
    length = np.zeros(n, np.int64)
    length[idx] = lengths
    elapsed = np.zeros(n, np.float64)
    elapsed[idx] = np.round(now - t_start[idx], 6)
    t_start[idx] = now
    infos[STATS_KEY] = {"r": length.astype(np.float64), "l": length, "t": elapsed}
    infos["_" + STATS_KEY] = done.copy()


def monitor_episode(length: int, t_origin: float) -> dict:
    """stable_baselines3.common.monitor.Monitor's info["episode"] of one ended episode."""
    return {"r": round(float(length), 6), "l": int(length), "t": round(time.time() - t_origin, 6)}


def wrapped_by_stats_recorder(env, max_depth: int = 12) -> bool:
    """True when this step() call comes from a Gymnasium RecordEpisodeStatistics (with
    key "episode") that wraps `env`, directly or through other vector wrappers."""
    if _RES_STEP is None:
        return False
    f = sys._getframe(1)
    for _ in range(max_depth):
        if f is None:
            return False
        if f.f_code is _RES_STEP:
            w = f.f_locals.get("self")
            if getattr(w, "_stats_key", None) == STATS_KEY and _unwrapped(w) is env:
                return True
        f = f.f_back
    return False


def _unwrapped(w):
    try:
        return w.unwrapped
    except Exception:       # a half-built wrapper: not ours
        return None
