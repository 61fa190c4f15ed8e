"""The ground floor of the study: contracts and the machinery every part shares.

core/ imports nothing of the floors above it (native/, versions/, learners/, peers/,
training/, harness/, report/); they all import it. tests/test_layers.py checks this.

    errors    StudyError: a user-facing error (one line, exit status 2)
    spec      EnvSpec / BatchSpec / ReplaySpec / NetSpec: every shape and dtype, once
    rng       the counter-based RNG of WORKLOAD.md (and LEARNER.md's streams)
    api       the generator contract: GenConfig, Generator, weights
    rung      Rung, the typed declaration of a generation rung (versions/vK_name/version.py)
    learner   Learner (declaration), LearnConfig, LearnerImpl (the learner interface)
    replay    the replay buffer of LEARNER.md and its counter-based minibatch indices
    discover  finds rung and learner folders (plugins found at run time, never named here)
    machine   machine identity and provenance
    results   results/<machine>/<kind>.jsonl: durable appends, tolerant reads
    measure   timing a generator honestly; medians with IQR and bootstrap intervals
    estimate  the end-to-end arithmetic (rows in, estimates out; never measures)
    evaluate  the greedy evaluation in Gymnasium that confirms a solve (ours and the peers')
    procutil  killing a child's whole process group
"""
