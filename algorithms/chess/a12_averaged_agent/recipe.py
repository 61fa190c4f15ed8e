from training.chess_overlap import AveragedRecipe

ALGORITHM = AveragedRecipe(
    number="12", title="the agent is the average of its weights",
    summary=("a11's run, with the agent that is scored (and handed over) the exponential average "
             "of the policy's weights over rounds, decaying by 0.97 a round (a half-life of about "
             "23 rounds); the games are still played with the policy's own weights, so the run "
             "is a11's update for update"),
    base="a11_hand_over",
    changes={},
    average=0.97,
    references=("Polyak and Juditsky 1992, Acceleration of stochastic approximation by averaging",
                "Izmailov et al. 2018, Averaging weights leads to wider optima and better "
                "generalization (SWA)",
                "Nikishin et al. 2018, Improving stability in deep reinforcement learning with "
                "weight averaging",
                "the decay 0.97 chosen on the search seeds 0-3 against 0.9, 0.99 and 0.995 "
                "(development runs on the Xeon, a12's NOTES)"))
