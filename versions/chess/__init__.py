"""Chess: the second workload, a DQN actor against a uniform-random opponent (its contract
WORKLOAD.md, the published perft counts beside it, its rungs, their shared code in common/)."""
