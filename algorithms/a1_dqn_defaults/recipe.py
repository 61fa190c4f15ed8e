from training.algorithm import Algorithm

ALGORITHM = Algorithm(
    number="1", title="DQN, the study's defaults",
    summary=("TrainConfig's defaults: Double DQN, one-step targets, a 4-128-128-2 network, "
             "U = 128 updates of 64 rows per round of 20 x 32 transitions"),
    references=("Mnih et al. 2015 (DQN); van Hasselt et al. 2016 (Double DQN); "
                "training/config.py says how the defaults were chosen",))
