from training.algorithm import Algorithm

ALGORITHM = Algorithm(
    number="4", title="n-step, a 64-unit network",
    summary=("a3 with 64 hidden units instead of 128: each update costs about a quarter of the FLOPs "
             "(the 128x128 layer becomes 64x64) and CartPole's value function still fits"),
    base="a3_nstep",
    changes={"hidden": 64},
    references=("CleanRL's dqn.py and PQN's CartPole settings use 120/84 and 128 hidden units; "
                "the width here is this ladder's own choice, judged by the criterion",))
