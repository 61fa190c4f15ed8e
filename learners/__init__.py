"""The learner ladder: one folder per learner rung (learners/lK_name/learner.py), found by
core.discover like the rungs of versions/. The contract is LEARNER.md."""
