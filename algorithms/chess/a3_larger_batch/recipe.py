from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="3", title="minibatches of 256",
    summary=("a2 with minibatches of 256 rows instead of 64: four times the rows per update, "
             "for one optimizer pass over the same 1.59 M parameters, whose cost does not "
             "grow with the rows"),
    base="a2_short_horizon",
    changes={"batch_size": 256},
    references=("Stooke & Abbeel 2018 (accelerated methods for deep RL: larger minibatches "
                "with a proportionate learning rate keep sample efficiency)",
                "results/intel-xeon-processor-16c-126g-avx512-h200/chess_sweep.jsonl, run "
                "20261128T182340-45ae78 (recipes g90, g90_b256; seed 0)"))
