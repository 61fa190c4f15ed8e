from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="6", title="64 hidden units, lr 1e-3",
    summary=("a5 with 64 hidden units and twice the learning rate: the optimizer's pass and "
             "the generator's products halve again; the larger step makes up for the smaller "
             "network's slower fit"),
    base="a5_many_games",
    changes={"hidden": 64, "lr": 0.001},
    references=("results/intel-xeon-processor-16c-126g-avx512-h200/chess_sweep.jsonl, run "
                "20261128T183305-d751ea (recipes h128_b2048_u4_lr5_n256t8, "
                "h64_b2048_u4_lr1e3_n256t8; seeds 0-1)",))
