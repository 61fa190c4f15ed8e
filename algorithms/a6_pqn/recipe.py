from training.algorithm import Algorithm

ALGORITHM = Algorithm(
    number="6", title="PQN",
    summary=("PQN: no replay and no target network, LayerNorm, Q(lambda) targets over each "
             "round of 32 environments x 32 steps, 4 epochs of 4 minibatches, then the round is "
             "dropped (training/pqn.py, its own reference update; pqn_native.cpp, its fast one)"),
    loop="pqn",
    changes={},
    references=("Gallici et al. 2024, Simplifying Deep Temporal Difference Learning (PQN); "
                "CleanRL's pqn.py and purejaxql (its CartPole settings: lambda 0.65, RAdam, "
                "clipping at 10, 120/84 LayerNorm'd units)",),
    fast="algorithms.a6_pqn.native",
    sources=("training/pqn.py", "training/pqn_verify.py"))
