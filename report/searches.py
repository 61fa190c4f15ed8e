"""How a search ran, for the sections that show one (training/study.py): its storage, its
trials completed, failed and pruned, and whether trials ran side by side.

Rows since the searches have a storage name their study ("study": storage, name, jobs) and
say how many trials of it ran beside each one ("beside"); a search resumed after an
interruption is one study over several runs, and it ends with a row "selection" (the trial
chosen, the study's counts). Rows from before have none of these: one run is one search,
held in memory, and what the code then did is said instead."""
from __future__ import annotations

from typing import List, Optional, Tuple


def newest(rows: List[dict]) -> Tuple[List[dict], Optional[dict]]:
    """(trial rows, selection row or None) of the newest search among `rows`."""
    last = rows[-1]
    st = last.get("study")
    if st:
        grp = [r for r in rows if (r.get("study") or {}).get("name") == st["name"]
               and r["study"].get("storage") == st.get("storage")]
    else:
        grp = [r for r in rows if r["run_id"] == last["run_id"]]
    trials = [r for r in grp if not r.get("selection")]
    sel = next((r for r in reversed(grp) if r.get("selection")), None)
    if sel is None and not st:          # before storage: the selected trial's row says so
        sel = next((r for r in trials if r.get("selected")), None)
    return trials, sel


def chosen(trials: List[dict], sel: Optional[dict]) -> Optional[dict]:
    """The selected trial's row (None: no trial was selected)."""
    if not sel or not sel.get("selected"):
        return None
    if not sel.get("selection"):
        return sel
    return next((r for r in trials if r["trial"] == sel["trial"] and r.get("state") == "complete"), None)


def how(trials: List[dict], sel: Optional[dict], before: str) -> str:
    """One or two sentences: where the study was kept, how its trials ended, side by side or not.
    `before`: how trials ran in the code that wrote rows without a storage."""
    n = {s: sum(r.get("state") == s for r in trials) for s in ("complete", "pruned", "failed", "interrupted")}
    ended = f"{n['complete']} complete, {n['pruned']} pruned, {n['failed']} failed"
    if not trials or not trials[-1].get("study"):
        return (f"Its study was held in memory (before the searches had a storage), in one run: "
                f"{ended}; {before}.")
    st = trials[-1]["study"]
    runs = len({r["run_id"] for r in trials + ([sel] if sel else [])})
    side = max((r.get("beside") or 0) for r in trials)
    text = (f"Its study `{st['name']}` is stored in `{st['storage']}`"
            + (f" and ran over {runs} runs (resumed)" if runs > 1 else "") + f": {ended}"
            + (f", {n['interrupted']} stopped by an interruption and run again" if n["interrupted"] else "")
            + ("" if sel else " (unfinished: no run has ended it yet)") + "; ")
    if side:
        text += (f"trials ran side by side (up to {side + 1} at once on one machine; --jobs "
                 f"{max(r['study'].get('jobs', 1) for r in trials)}), so a wall-clock value is contended.")
    else:
        text += "one trial at a time."
    return text
