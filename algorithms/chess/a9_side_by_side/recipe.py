from training.chess_overlap import SideBySideRecipe

ALGORITHM = SideBySideRecipe(
    number="9", title="acting beside learning",
    summary=("a8's settings, with round k + 1's games played while round k's updates run, each on "
             "half of the cores: the policy that plays is one round (4 updates) behind the "
             "learner, and a round's generation hides behind its learning"),
    base="a8_48_units",
    changes={},
    references=("Horgan et al. 2018, Distributed Prioritized Experience Replay (Ape-X): actors "
                "that play with weights a few updates old",
                "Espeholt et al. 2018, IMPALA: acting and learning decoupled",
                "training/chess_overlap.py: the loop, and its test that the side-by-side run "
                "equals the same schedule run in turn"))
