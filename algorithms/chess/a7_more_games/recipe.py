from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="7", title="512 games x 4 moves a round",
    summary=("a6 with the round's 2,048 transitions drawn from twice as many games, each half as "
             "far: the replay sees more openings and positions between updates, and a move the "
             "network has just learned is played sooner"),
    base="a6_narrower",
    changes={"envs": 512, "steps": 4},
    references=("results/amd-epyc-2c-24g-avx2/chess_sweep.jsonl, run 20261128T213911-sweep6 "
                "(recipes a6, n512t4; seeds 0-3)",))
