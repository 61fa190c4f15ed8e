from training.chess_algorithm import ChessAlgorithm

ALGORITHM = ChessAlgorithm(
    number="5", title="many games, few large updates",
    summary=("a4 with rounds of 256 games x 8 moves (2,048 transitions, 3.2x a1's) and 4 "
             "updates of 2,048 rows at lr 5e-4, the target every 32 updates: the round's data "
             "is broader (more positions, fewer moves of each game) and the optimizer passes "
             "per transition 13x fewer"),
    base="a4_narrow_trunk",
    changes={"envs": 256, "steps": 8, "batch_size": 2048, "updates_per_round": 4, "lr": 0.0005,
             "target_period": 32},
    references=("Gallici et al. 2024 (PQN: many parallel environments and few large updates "
                "once generation is cheap)",
                "results/intel-xeon-processor-16c-126g-avx512-h200/chess_sweep.jsonl, runs "
                "20261128T182813-dc58ef .. 20261128T183305-d751ea (sweeps 2-5; seeds 0-3)"))
