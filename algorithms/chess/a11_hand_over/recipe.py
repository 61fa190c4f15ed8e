from training.chess_overlap import HandOverRecipe

ALGORITHM = HandOverRecipe(
    number="11", title="the games' cores handed to the learner",
    summary=("a9's rounds, with the generator's cores handed to the learner once a round's games "
             "end: the updates run one at a time on half of the cores while the games play, "
             "the rest of the round's updates on all of them; a9's run, update for update"),
    base="a9_side_by_side",
    changes={},
    references=("training/chess_overlap.py: the loop (hand_over), and its test that the run "
                "equals a9's schedule run in turn",
                "learners/l4c_native_chess/NOTES.md: the native chess learners' weights do not "
                "depend on their thread count"))
