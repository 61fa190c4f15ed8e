"""What the ladder's Gymnasium clients share, whatever the workload (CartPole's
versions/cartpole/common/vector_env.py and single_env.py, chess's versions/chess/client/):
Gymnasium's error types for bad calls (errors.py), the vector env's arguments (args.py) and
the infos of a vector step: final observations and episode statistics (infos.py), a single
env's reset (single.py) and the stable-baselines3 VecEnv over one vector env (sb3.py)."""
