from training.algorithm import Algorithm

ALGORITHM = Algorithm(
    number="2", title="DQN, Optuna's settings",
    summary=("a1 with the learning rate `make e2e`'s Optuna selection chose for the fastest pair "
             "(U and the batch size it kept at a1's)"),
    base="a1_dqn_defaults",
    changes={"lr": 0.0009255272305746527},
    references=("the selection of `make e2e` run 20261124T223425-33da64 (results/*/trials.jsonl, "
                "trial 23, seeds 0-1)",))
