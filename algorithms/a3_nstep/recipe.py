from training.algorithm import Algorithm

ALGORITHM = Algorithm(
    number="3", title="n-step returns (n = 3)",
    summary=("a1 with 3-step returns: each stored row carries three rewards and bootstraps from "
             "the state three steps on, discounted by gamma^3, so a reward reaches the states "
             "before it in a third of the updates"),
    base="a1_dqn_defaults",
    changes={"n_step": 3},
    references=("Sutton 1988 (n-step TD); Hessel et al. 2018 (Rainbow: n = 3 among its parts)",))
