"""CartPole-v1: the first workload (its contract WORKLOAD.md, its rungs, their shared code in common/)."""
