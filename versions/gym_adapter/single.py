"""What a ladder single env (a vector env of one: CartPole's RungEnv, chess's ChessEnv) does
at reset() before stepping its vector env, as Gymnasium's envs do: options refused, since
the start states come from WORKLOAD.md's RNG; without a seed, the first reset draws one from
the env's np_random (a random stream, as Gymnasium) and later ones continue the stream; with
a seed, the spaces are seeded with it too."""
from __future__ import annotations

from typing import Optional

from versions.gym_adapter.errors import InvalidArgument


def reset_seed(env, seed: Optional[int], options: Optional[dict], why: str = "") -> Optional[int]:
    """The seed to pass to the vector env's reset (None: go on with the stream). `env` has
    np_random (gym.Env.reset has set it), the two spaces and a `_seeded` flag."""
    if options:
        raise InvalidArgument(f"reset options {sorted(options)} are not supported{why}")
    if seed is None and not env._seeded:
        seed = int(env.np_random.integers(0, 2 ** 62))
    if seed is not None:
        env._seeded = True
        env.action_space.seed(seed)
        env.observation_space.seed(seed)
    return seed
