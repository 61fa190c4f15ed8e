"""collect(T): the rung's own actor loop behind RungVectorEnv (the fast path for DQN).

A mixin of RungVectorEnv (vector_env.py), which provides _check_open, _enter, num_envs,
seed_value, version_module and the settings kept in _gen_args / _user_factory.
"""
from __future__ import annotations

import numpy as np

from versions.gym_adapter.errors import InvalidArgument


class CollectPath:
    """A DQN loop's data collection in one call per round, environments and the actor's
    epsilon-greedy network in the rung's code (no Python per step):

        actor = RungVectorEnv(4096, seed=0, version="v5b_simd", policy="egreedy", workers=2)
        for round in range(rounds):
            actor.set_weights(weights_from_torch(q_net))   # Linear 4->H, H->H, H->2
            actor.set_epsilon(epsilon(round))
            batch = actor.collect(32)      # obs, action, reward, next_obs, terminated,
            replay.add(batch)              # truncated: [32, 4096, ...], copy to keep
            learn(replay)

    policy="random" collects with WORKLOAD.md's random actions instead.
    """

    def collect(self, T: int):
        """T steps of all N environments by the rung's generator, its own policy included
        (random, or epsilon-greedy over the network given by set_weights/set_epsilon):
        the arrays of WORKLOAD.md (obs, action, reward, next_obs, terminated, truncated),
        [T, N, ...] time-major, next_obs holding the final obs where an episode ended
        (same-step autoreset). The arrays are reused by the next call: copy what you keep.
        The fast path for a DQN loop (examples/README.md): per call, one native call."""
        self._check_open()
        self._enter("collect")
        if self._generator is None:
            factory = self._user_factory or getattr(self.version_module, "make_generator", None)
            if factory is None:
                raise InvalidArgument("collect() needs a version (or a generator_factory)")
            from core.api import DEFAULT_EPSILON, GenConfig
            g = self._gen_args
            cfg = GenConfig(n_envs=self.num_envs, seed=self.seed_value, policy=g["policy"],
                            epsilon=DEFAULT_EPSILON if g["epsilon"] is None else g["epsilon"],
                            weights=g["weights"], workers=g["workers"])
            self._generator = factory(cfg)
        return self._generator.generate(int(T))

    def set_weights(self, weights) -> None:
        """The Q-network collect() acts with: w1 b1 w2 b2 w3 b3 (weights_from_torch)."""
        self._gen_args["weights"] = weights
        if self._generator is not None:
            self._generator.set_weights(weights)

    def set_epsilon(self, epsilon: float) -> None:
        self._gen_args["epsilon"] = float(epsilon)
        if self._generator is not None:
            self._generator.set_epsilon(float(epsilon))


def weights_from_torch(net) -> dict:
    """The six arrays (w1 b1 w2 b2 w3 b3, nn.Linear layout) of a torch module whose
    Linear layers are, in order, 4->H, H->H, H->2 (the study's Q-network)."""
    import torch
    layers = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    if len(layers) != 3:
        raise ValueError(f"expected 3 Linear layers (4->H->H->2), found {len(layers)}")
    out = {}
    for i, layer in enumerate(layers, start=1):
        out[f"w{i}"] = layer.weight.detach().cpu().numpy().astype(np.float32)
        out[f"b{i}"] = layer.bias.detach().cpu().numpy().astype(np.float32)
    return out
