from training.chess_overlap import WeightedMaterialRecipe

ALGORITHM = WeightedMaterialRecipe(
    number="14", title="the material term weighted twice, for the stretch",
    summary=("a13's run with the material term weighted 2 instead of 3 in what the learner is "
             "taught: the fourteenth sweep's weight for 0.9 (the stretch), where a13's 3 is its "
             "weight for the ladder's 0.75"),
    base="a13_material_weighted",
    changes={},
    average=0.97,
    material=2.0,
    references=("the weight 2 chosen on the search seeds 0-3 by the fourteenth sweep "
                "(algorithms/chess/sweeps/sweep14.json): the fewest rounds to 0.9 of 1, 2, 3 and 4",))
