from training.algorithm import Algorithm

ALGORITHM = Algorithm(
    number="5", title="what the search chose",
    summary=("a4 with the settings Optuna chose for the wall-clock to solved on seeds 0-1: "
             "4-step returns, 32 hidden units, U = 256 updates a round, a learning rate of 2.9e-3"),
    base="a4_narrow_net",
    changes={"n_step": 4, "hidden": 32, "updates_per_round": 256, "lr": 0.002878471247358045},
    references=("the search of run 20261126T041454-72545f (results/*/algorithm_trials.jsonl, the selected "
                "trial; `python -m harness algorithms --search`)",))
