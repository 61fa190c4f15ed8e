from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="4", title="a narrower trunk (128 hidden units)",
    summary=("a3 with 128 hidden units instead of 256: the output layer, three quarters of "
             "the parameters, halves, and so do the optimizer's pass and the generator's "
             "legal-row products; the rounds to 0.75 barely change"),
    base="a3_larger_batch",
    changes={"hidden": 128},
    references=("results/intel-xeon-processor-16c-126g-avx512-h200/chess_sweep.jsonl, run "
                "20261128T182340-45ae78 (recipes g90_b256, g90_h128_b256; seed 0)",))
