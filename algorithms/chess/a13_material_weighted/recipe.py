from training.chess_overlap import WeightedMaterialRecipe

ALGORITHM = WeightedMaterialRecipe(
    number="13", title="the material term weighted three times",
    summary=("a12's run, with the replay's rewards the workload's outcome plus three times its "
             "material term (3 x (M_after - M_before) / 64 instead of 1 x): the games, their "
             "rewards and the score are the workload's; only what the learner is taught "
             "changes, so captures, which lead to the mates against this opponent, pay more "
             "beside the mate's +1"),
    base="a12_averaged_agent",
    changes={},
    average=0.97,
    material=3.0,
    references=("Ng, Harada and Russell 1999, Policy invariance under reward transformations "
                "(shaping; here the potential-based form was tried and was slower, a13's NOTES)",
                "Mnih et al. 2015, Human-level control through deep reinforcement learning "
                "(the reward's scale as a setting of the learner, there clipped)",
                "the weight 3 chosen on the search seeds 0-3 against 2 and 4 "
                "(development runs on the Xeon, a13's NOTES)"))
