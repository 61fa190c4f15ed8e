from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="8", title="48 hidden units",
    summary=("a7 with 48 hidden units instead of 64: the learner's products and the generator's "
             "greedy products shrink by a quarter, and at a7's round the narrower network needs "
             "about as many rounds"),
    base="a7_more_games",
    changes={"hidden": 48},
    references=("results/amd-epyc-2c-24g-avx2/chess_sweep.jsonl, runs 20261128T213911-sweep6 "
                "(recipe h48) and 20261128T214939-sweep7 (recipe h48_n512t4; seeds 0-3)",))
