"""The DQN training loop: any rung's generator feeding any learner rung.

    config    TrainConfig: every setting of a run, with its help text (the CLI is built from it)
    episodes  EpisodeTracker (returns from the batches; the greedy check is core/evaluate.py)
    actors    the generator in this process, in a thread, or in a child process
    loop      train(): rounds until solved; TrainResult; run_parallel() for independent seeds
    cost      measure_learner(): time per update and per round of a learner

It imports core, the rungs and the learners (found by core.discover); harness/ and
examples/ import it.
"""
