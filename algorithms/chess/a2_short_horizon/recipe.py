from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="2", title="a shorter horizon (discount 0.9)",
    summary=("a1 with discount 0.9: the targets look about 10 moves ahead instead of 100, "
             "where the material term and a mate pay; a bootstrapped value of lower variance "
             "that the network fits in fewer updates"),
    base="a1_today",
    changes={"gamma": 0.9},
    references=("Jiang et al. 2015 (the dependence of planning horizon on sample size: a "
                "discount below the evaluation's can learn faster from little data)",
                "results/intel-xeon-processor-16c-126g-avx512-h200/chess_sweep.jsonl, run "
                "20261128T182340-45ae78 (recipes base, g90, g80; seed 0)"))
