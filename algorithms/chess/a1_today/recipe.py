from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="1", title="today's settings",
    summary=("the settings chess trained with before this ladder: LEARNER.md's update on the "
             "1280-256-256-4672 network, minibatches of 64, discount 0.99, a hard target every "
             "256 updates, rounds of 20 games x 32 moves, and the committed search's U and lr"),
    base="",
    changes={"updates_per_round": 16, "lr": 0.0001388890246776065},
    references=("results/amd-epyc-2c-24g-avx2/chess_search.jsonl, run 20261126T074804-2d8363 "
                "(Optuna over U and lr, seeds 0-1): trial 6, U = 16, lr = 1.39e-4",))
