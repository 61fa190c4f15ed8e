"""Chess end to end in the report: the targets line, the figures, the GPU rows and the stale
marks (report/parts/chess_e2e_targets.py, share_figure.py, chess_gpu.py)."""
from __future__ import annotations

import re

import pytest

from core import results
from tests.chess_e2e_rows import CFG, _cost, _spread, _train
from tests.helpers import numbers


def test_the_chess_targets_are_stated_from_the_rows(tmp_path):
    from report.context import Context
    from report.sections import chess_targets
    d = tmp_path / "res"
    for v, policy, n, tps in (("v1_python", "random", 4096, 2000.0), ("v5_x", "random", 4096, 1.5e6),
                              ("v1_python", "egreedy", 4096, 1000.0), ("v5_x", "egreedy", 4096, 2e5),
                              ("v1_python", "random", 20, 2000.0), ("v5_x", "random", 20, 2e6)):
        results.append("throughput", {"workload": "chess", "version": v, "title": v, "number": v[1],
                                      "baseline": v == "v1_python", "policy": policy, "n_envs": n,
                                      "steps": 32, "requested_steps": 32, "workers": 1,
                                      "samples_s": [n * 32 / tps], "transitions_per_s": tps}, directory=d)
    results.append("peers", {"workload": "chess", "peer": "fast_peer", "policy": "random", "n_envs": 20,
                             "plies_per_s": 1e5},
                   directory=d)
    text = chess_targets.render(Context(results_dir=d, report_dir=tmp_path / "rep0"))
    assert "no peer ran a network in its loop in this run" in text
    results.append("peers", {"workload": "chess", "peer": "net_peer", "policy": "egreedy", "n_envs": 4096,
                             "plies_per_s": 5e4}, directory=d)
    for pos, nps, ok in (("start", 3e8, True), ("kiwipete", 9e7, True)):
        results.append("perft", {"workload": "chess", "version": "v4_cpp", "position": pos, "depth": 4,
                                 "nodes": 100, "correct": ok, "nodes_per_s": nps, "median_s": 1.0},
                       directory=d)
    text = chess_targets.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    # each target's line by the names in it, and its numbers from the rows above
    lines = [re.sub(r" \(run [^)]*\)|; run [^;)]*", "", x) for x in text.splitlines() if x.startswith("- ")]
    rung = {p: next(x for x in lines if f" {p} " in x and "_peer" not in x) for p in ("random", "egreedy")}
    peer = {n: next(x for x in lines if n in x) for n in ("fast_peer", "net_peer")}
    # 1.5 M / 2 k = 750x, short of 1,000x: it needs 1,000 x 2 k = 2 M, 1.33x the best rung's
    assert numbers(rung["random"]) == [1000, 4096, 1.5e6 / 1e6, 2000 / 1e3, 1.5e6 / 2000,
                                       1000 * 2000 / 1e6, round(1000 * 2000 / 1.5e6, 2)]
    assert numbers(rung["egreedy"]) == [100, 4096, 2e5 / 1e3, 1000 / 1e3, 2e5 / 1000]
    # against a peer's plies / 2 (two players' moves make one transition each side)
    assert numbers(peer["fast_peer"]) == [10, 20, 2, 2e6 / (1e5 / 2)]
    # an egreedy peer is held against the best egreedy rung (2e5 / 2.5e4 = 8x), not the random one
    assert numbers(peer["net_peer"]) == [10, 4096, 2, 2e5 / (5e4 / 2)]
    assert ["**not met**" in x for x in (rung["random"], rung["egreedy"], peer["fast_peer"],
                                          peer["net_peer"])] == [True, False, False, True]
    assert "no peer ran a network" not in text
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    clause = re.sub(r" \(run [^)]*\)", "", chess_targets.headline_clause(ctx))
    assert numbers(clause) == [4096, 1.5e6 / 2000, 2e5 / 1000, 2e5 / (5e4 / 2)] and "net_peer" in clause
    assert "fast_peer" not in clause                  # its rows are at N = 20, not 4,096
    perft = next(x for x in lines if "`v4_cpp`" in x)         # 100 M nodes/s; kiwipete's 90 M
    assert numbers(perft) == [100, 4, 9e7 / 1e6] and "**not met**" in perft and "kiwipete" in perft


def test_the_generation_share_figure_reads_both_workloads(tmp_path):
    from report.context import Context
    from report.parts import share_figure
    d = tmp_path / "res"
    for seed, (gen, wall) in enumerate([(1.0, 10.0), (2.0, 10.0), (3.0, 10.0)]):
        results.append("e2e", {"family": "ladder", "entry": "v4_cpp x l1_torch_eager", "label": "default",
                               "mode": "alternating", "seed": seed, "gen_s": gen, "wall_s": wall,
                               "solved": True, "budget_s": 30.0}, directory=d)
    results.append("e2e", {"family": "ladder", "entry": "v4_cpp x l1_torch_eager", "label": "default",
                           "mode": "overlapped", "seed": 9, "gen_s": 9.0, "wall_s": 10.0, "solved": True,
                           "budget_s": 30.0}, directory=d)          # not an alternating run: left out
    _cost(d, "v1_python", "l1_torch_eager", 0.3, 0.1, baseline=True)
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep")
    assert share_figure.cartpole_shares(ctx) == {("v4_cpp", "l1_torch_eager"): pytest.approx(0.2)}
    assert share_figure.chess_shares(ctx.for_workload("chess")) == {("v1_python", "l1_torch_eager"): pytest.approx(0.75)}
    assert share_figure.figure(ctx.for_workload("chess")) == "figures/generation_share.png"
    assert (tmp_path / "rep" / "figures" / "generation_share.png").exists()


def test_a_gpu_machines_row_counts_only_after_its_learner_passed_there():
    """report/parts/chess_gpu.py: a chess row of a GPU machine counts when the newest chess
    learner check of its learner, on its device, on that machine, before it, passed."""
    from report.parts.chess_gpu import cost_runs, counted

    class Machine:
        def __init__(self, rows):
            self._rows = rows

        def rows(self, kind):
            return self._rows.get(kind, [])

    def check(status, t):
        return {"workload": "chess", "learner": "l2b_cuda_graphs", "device": "cuda", "status": status,
                "time": f"2026-01-01T{t}+0000"}

    def row(t, device="cuda", learner="l2b_cuda_graphs"):
        return {"learner": learner, "version": "v1_python", "time": f"2026-01-01T{t}+0000", "run_id": t,
                "config": {"device": device, "updates_per_round": 16}, "round_learn_s": _spread(0.01)}
    g = Machine({"learner_verification": [check("failed", "10:05:00"), check("passed", "10:16:00")]})
    assert not counted(g, row("10:00:00"))                       # before any check
    assert not counted(g, row("10:06:00"))                       # after a failed one
    assert counted(g, row("10:17:00"))
    assert not counted(g, row("10:17:00", device="cpu"))         # checked on the GPU only
    assert not counted(g, row("10:17:00", device="auto", learner="l4c_native_chess"))   # never checked
    g._rows["chess_train"] = [row("10:06:00"), row("10:17:00")]
    assert [r["run_id"] for r in cost_runs(g).values()] == ["10:17:00"]


def test_a_target_met_by_medians_but_not_by_quartiles_says_so(tmp_path):
    """1,100x by the medians, but the best rung's first quartile over v1's third is below
    1,000x: the report says 'not robustly' with that ratio; a wide margin says nothing more."""
    from report.context import Context
    from report.sections import chess_targets
    d = tmp_path / "res"
    for v, policy, iqr, tps in (("v1_python", "random", [1900.0, 2100.0], 2000.0),
                                ("v5_x", "random", [1.8e6, 2.4e6], 2.2e6),
                                ("v1_python", "egreedy", [990.0, 1010.0], 1000.0),
                                ("v5_x", "egreedy", [2.9e5, 3.1e5], 3e5)):
        results.append("throughput", {"workload": "chess", "version": v, "title": v, "number": v[1],
                                      "baseline": v == "v1_python", "policy": policy, "n_envs": 4096,
                                      "steps": 32, "requested_steps": 32, "workers": 1,
                                      "samples_s": [4096 * 32 / tps], "transitions_per_s": tps,
                                      "transitions_per_s_iqr": iqr}, directory=d)
    text = chess_targets.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    random, egreedy = (next(l for l in text.splitlines() if f"{p} policy" in l) for p in ("random", "egreedy"))
    assert "**met**" in random and "**met**" in egreedy
    # the medians' ratio, and the quartiles' (v5_x's first over v1's third) where it falls short
    assert {2.2e6 / 2000, round(1.8e6 / 2100)} <= set(numbers(random))          # 1,100x; 857x
    assert 3e5 / 1000 in numbers(egreedy) and round(2.9e5 / 1010) not in numbers(egreedy)


def test_the_chess_part_has_a_memory_roof_column_and_its_own_scaling_figures(tmp_path):
    """The ladder's last column is bytes written over the machine's DRAM fill ceiling (a row of
    no workload: the machine's); the chess sweep is drawn in the chess part, under names of its
    own, never over CartPole's figures."""
    from report.context import Context
    from report.sections import chess
    d = tmp_path / "res"
    results.append("ceilings", {"ceiling": "bandwidth_fill", "threads": 2, "value": 10.0, "unit": "GB/s"},
                   directory=d)
    for v, n, tps in (("v1_python", 1, 1e3), ("v1_python", 20, 1e3), ("v1_python", 4096, 1e3),
                      ("v5_x", 1, 1e5), ("v5_x", 20, 1e6), ("v5_x", 4096, 2e6)):
        results.append("throughput", {"workload": "chess", "version": v, "title": v, "number": v[1],
                                      "baseline": v == "v1_python", "policy": "random", "n_envs": n,
                                      "steps": 32, "requested_steps": 32, "workers": 1,
                                      "samples_s": [n * 32 / tps], "transitions_per_s": tps}, directory=d)
    text = chess.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    bpt = 1391
    assert f"| {100 * 2e6 * bpt / 10e9:.3g}% |" in text                     # 27.8% of 10 GB/s
    assert "the machine's measured DRAM fill bandwidth (10 GB/s, 2 threads" in text
    assert "### Scaling" in text and "#### Throughput against N" in text
    assert "figures/chess_throughput_vs_n.png" in text
    assert (tmp_path / "rep" / "figures" / "chess_throughput_vs_n.png").exists()
    assert not (tmp_path / "rep" / "figures" / "throughput_vs_n.png").exists()


def test_the_targets_line_judges_share_speedup_and_estimate_errors():
    """The end-to-end targets on the report's machine: the practitioner's generation share
    (>= 90%), the best pair's estimated speed-up (>= 100x, with the round it would need) and
    each estimate's median error over seeds (within 10%)."""
    from report.parts.chess_e2e_targets import targets

    def cost(v, learner, gen, learn):
        return {"version": v, "learner": learner, "config": {"updates_per_round": 16},
                "round_gen_s": {"median": gen}, "round_learn_s": {"median": learn}, "round_store_s": {"median": 0.0}}
    base = cost("v1_python", "l1_torch_eager", 0.9, 0.1)
    costs = [base, cost("v5c_blocked_sparse", "l1_torch_eager", 0.01, 0.1),
             cost("v5c_blocked_sparse", "l4c_native_chess", 0.004, 0.006)]
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 200}, base,
                        [("`a` x `b`", 4.0), ("`c` x `d`", -12.0)])
    # v1 x L1: 0.9 s of a 1.0 s round generating; 100 of its rounds against 200 of L4c's
    # 0.010 s rounds; 100x would need 100 x 1.0 s / 100 / 200 rounds; the targets are 90%,
    # 100x and 10%
    share, speedup, need = 100 * 0.9 / 1.0, 100 * 1.0 / (200 * 0.010), 100 * 1.0 / 100 / 200
    assert numbers(text) == [share, 90, speedup, 100, need * 1e3, 4, 16, 6, 10, 4, -12]
    assert "`v5c_blocked_sparse` x `l4c_native_chess`" in text
    assert [text.count(m) for m in ("**met**", "**not met**")] == [2, 2]
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 50}, base, [])
    assert "200.0x sooner, estimated (>= 100x: **met**)." in text and "need a round" not in text
    assert targets(costs, {"l4c_native_chess": 50}, base, []) == []
    # the best pair's cost row measured code that has changed since: the line says so
    costs[2].update(code={"roots": ["core/api.py"], "hash": "0" * 12})
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 200}, base, [])
    assert "`l4c_native_chess` (†: measured before its code last changed), reaches" in text


def test_a_missed_speedup_target_gives_the_floor_of_adamws_pass():
    """Where the best pair misses 100x, the line computes AdamW's floor from the network's
    parameters and the measured copy bandwidth: its time for U updates, against the round
    the target allows and against the learner's own time."""
    from report.parts.chess_e2e_targets import targets

    def cost(v, learner, gen, learn):
        return {"version": v, "learner": learner, "config": {"updates_per_round": 16},
                "round_gen_s": {"median": gen}, "round_learn_s": {"median": learn}, "round_store_s": {"median": 0.0}}
    base = cost("v1_python", "l1_torch_eager", 0.9, 0.1)
    costs = [base, cost("v5c_blocked_sparse", "l4c_native_chess", 0.004, 0.016)]
    n = 1_000_000
    floor = (n, 24 * n, {"value": 12.0, "threads": 2}, 24 * n / 12e9)       # 2 ms an update
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 200}, base, [], floor)
    # 24 bytes a parameter (theta, m, v, float32, read and written) x 1 M parameters; 16
    # updates at 12 GB/s; against the 5 ms round 100x allows; L4c's 16 ms of learning
    floor_s = 16 * 24 * n / 12e9
    adamw = numbers(text[text.index("AdamW"):])
    assert adamw[:7] == [24 * n / 1e6, n / 1e6, 16, floor_s * 1e3, 12.0, 2, round(floor_s / 0.005, 1)]
    assert 100 * floor_s / 0.016 in adamw                                      # 200% of the floor's rate
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 20}, base, [], floor)
    assert "AdamW" not in text                                               # 500x: met, no floor


def test_a_stale_round_cost_row_is_marked_and_the_mark_explained(tmp_path):
    """† in the round-cost table comes with its legend, and neither appears while every
    row's code is as it was measured."""
    from report.context import Context
    from report.sections import chess_e2e
    d = tmp_path / "res"
    src = ["core/api.py"]
    _cost(d, "v1_python", "l1_torch_eager", 0.4, 0.4, baseline=True)
    results.append("chess_round_costs", {
        "workload": "chess", "version": "v5c_blocked_sparse", "learner": "l1_torch_eager", "baseline": False,
        "workers": 1, "learner_threads": 1, "config": CFG, "rounds": 12, "startup_s": 0.1,
        "round_gen_s": _spread(0.006), "round_learn_s": _spread(0.4), "round_store_s": _spread(0.0),
        "gen_share": 0.015, "sources": src, "source_hash": results.source_hash(src)}, directory=d)
    text = chess_e2e.round_costs(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))
    assert "†" not in text and "†" not in chess_e2e.headline(Context(results_dir=d, report_dir=tmp_path / "rep"))
    p = results.kind_path("chess_round_costs", directory=d)
    h = results.load("chess_round_costs", directory=d)[-1]["code"]["hash"]
    p.write_text(p.read_text().replace(h, "0" * 12))                          # its code changed since
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep")
    text = chess_e2e.round_costs(ctx.for_workload("chess"))
    assert "`v5c_blocked_sparse` †" in text and "\n† a file that the row's code hashes" in text
    # the README's sentence quotes that row's round: it carries the mark too
    assert "`l1_torch_eager` (†: measured before its code last changed), 2.0x less." in chess_e2e.headline(ctx)


def test_the_learner_target_sets_the_best_learner_against_layer_2s_products_at_the_fma_peak(monkeypatch):
    """Per thread count, from one run: the fastest native learner's factor over l4c, the
    layer-2 products' time at the measured FMA peak, and the share of that peak a 4x learner
    would need (5 products of B x H x H, 2 FLOPs a multiply-add)."""
    from report.parts import chess_learner_roof as roof
    peaks = {1: 100e9, 2: 200e9}
    monkeypatch.setattr(roof, "fma_peak", lambda c, t: peaks.get(t))

    def row(learner, threads, s, rid="R2"):
        return {"learner": learner, "threads": threads, "update_s": s, "run_id": rid,
                "batch_size": 64, "hidden": 256}
    timed = [row("l4c_native_chess", 1, 2e-3), row("l4e_lazy_adamw", 1, 1e-3),
             row("l1_torch_eager", 1, 40e-3),                     # not a rival: not native
             row("l4c_native_chess", 2, 1.2e-3, "R1"), row("l4e_lazy_adamw", 2, 0.6e-3, "R0")]
    text = roof.learner_roof(None, timed)
    flops = 2 * 5 * 64 * 256 * 256
    assert numbers(text)[:5] == [4, 2, 5, round(flops / 1e6), 64]      # 4x; layer 2; 5 products
    one = text[text.index("At 1 thread"):]
    assert "`l4e_lazy_adamw` is 2.00x" in one and "2 thread" not in one  # R1 timed no rival at 2
    floor = flops / 100e9
    assert f"{floor / 0.5e-3:.0%} of that peak" in one and f"whole update: {floor / 1e-3:.0%}" in one
    assert "past the roof" not in text
    fast_base = roof.learner_roof(None, [row("l4c_native_chess", 1, 1e-3), row("l4e_lazy_adamw", 1, 0.8e-3)])
    assert f"{flops / 100e9 / 0.25e-3:.0%} of that peak" in fast_base and "past the roof" in fast_base
    assert roof.learner_roof(None, [row("l4c_native_chess", 1, 2e-3)]) == ""


def test_the_learner_target_at_a_recipes_update_reads_the_newest_cost_run(monkeypatch):
    """At the recipe's own B and H, from the newest cost run with l4c and a native rival on one
    recipe: the rival's factor a update (the round's learning over U), and the FMA-peak share a
    4x learner would need for layer 2's products."""
    from report.parts import chess_learner_roof as roof
    monkeypatch.setattr(roof, "fma_peak", lambda c, t: {2: 100e9}.get(t))
    st = {"batch_size": 2048, "hidden": 48, "updates_per_round": 4}

    def cost(learner, learn_s, run, algorithm="a8_48_units"):
        return {"run_id": run, "algorithm": algorithm, "version": "v5c_blocked_sparse", "learner": learner,
                "threads": 2, "settings": st, "round_learn_s": {"median": learn_s}}

    class C:
        def __init__(self, rows):
            self._rows = rows

        def rows(self, kind):
            if kind == "chess_algorithm":
                return [{"run_id": "R1", "algorithm": "a4_narrow_trunk"}]
            return self._rows if kind == "chess_algorithm_cost" else []
    rows = [cost("l4c_native_chess", 0.020, "R0"), cost("l4f_prefetched_rows", 0.004, "R0"),
            cost("l4c_native_chess", 0.016, "R1"), cost("l4f_prefetched_rows", 0.008, "R1"),
            cost("l4c_native_chess", 0.010, "R1", "a1_today"), cost("l4f_prefetched_rows", 0.009, "R1", "a1_today"),
            cost("l1_torch_eager", 0.001, "R1")]                         # not a rival: not native
    text = roof.recipe_roof(C(rows))
    assert "`a8_48_units`" in text                                       # newest rung first, a1 not
    rows = [{**r, "algorithm": "a4_narrow_trunk"} if r["algorithm"] == "a1_today" else r for r in rows]
    assert "`a4_narrow_trunk`" in roof.recipe_roof(C(rows))               # the one the run trained
    flops = 2 * 5 * 2048 * 48 * 48
    assert "cost run R1" in text and "`l4f_prefetched_rows` is 2.00x" in text
    assert f"{flops / 1e6:.0f} MFLOP" in text
    assert f"{flops / 100e9 / 1e-3:.0%} of it" in text and "does not forbid" in text
    assert roof.recipe_roof(C([cost("l4c_native_chess", 0.016, "R1")])) == ""
