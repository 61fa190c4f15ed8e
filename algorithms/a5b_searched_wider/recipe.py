from training.algorithm import Algorithm

ALGORITHM = Algorithm(
    number="5b", title="a second search, from a5",
    summary=("a5 with the settings a second Optuna search chose, started from a5 with smaller sizes "
             "on offer: 5-step returns, 16 hidden units, batches of 32, U = 128, a learning rate of 1e-2"),
    base="a5_searched",
    changes={"n_step": 5, "hidden": 16, "batch_size": 32, "updates_per_round": 128,
             "lr": 0.009973486555495814},
    references=("the search of run 20261127T003415-e40089 (results/*/algorithm_trials.jsonl, the selected "
                "trial; `python -m harness algorithms --search --base a5_searched`)",))
