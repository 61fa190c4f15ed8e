"""CleanRL's PQN recipe for CartPole-v1: a transcription of `cleanrl/pqn.py`.

PQN (Gallici et al. 2024, "Simplifying Deep Temporal Difference Learning"): DQN without a
replay buffer or a target network; LayerNorm in the Q-network; a few parallel
environments; Q(lambda) targets computed backwards over each rollout; several epochs of
minibatch updates on it, then the rollout is thrown away.

Why a transcription: as for dqn.py (cleanrl_peer.py): CleanRL is used from its repository
as scripts (`python pqn.py`), the PyPI package is a 2020 snapshot without pqn.py, and the
loop has no hook for a stopping rule. Read at github.com/vwxyzjn/cleanrl commit 10334fa.

What is kept exactly: its `Args` defaults (HYPERPARAMETERS), its seeding (random, numpy,
torch, `torch_deterministic`, action spaces seeded with seed + i, `envs.reset(seed=seed)`),
the SyncVectorEnv of 4 `gym.make` + RecordEpisodeStatistics envs, the Q-network
(4-120-84-2 with LayerNorm before each ReLU, orthogonal init with gain sqrt 2, zero
biases), RAdam, the linear learning-rate anneal per iteration, the linear epsilon schedule
over global steps, the epsilon-greedy draw (torch.randint / torch.rand per env), the
Q(lambda) recursion as the script writes it, MSE loss, gradient-norm clipping at 10, and
`update_epochs` passes of `num_minibatches` shuffled minibatches (np.random.shuffle).

What differs, and why:
* the SyncVectorEnv is made with `autoreset_mode=SAME_STEP` (the script was written for
  gymnasium 0.29, which resets within the step; gymnasium 1.x resets a step later);
* no TensorBoard writer, no per-episode or per-iteration print;
* the stopping rule (common.Judge) is checked after every vector step; if the recipe's
  500k steps end before the budget, training goes on at the last iteration's learning rate
  and the final epsilon (the anneal would otherwise end at zero).
"""
from __future__ import annotations

import time

from .cleanrl_peer import greedy_policy, linear_schedule, record_episodes, seed_all, sync_envs
from .common import Judge, PeerUnavailable, package_versions, require, thread_info

SOURCE = ("CleanRL cleanrl/pqn.py, Args defaults (github.com/vwxyzjn/cleanrl at 10334fa; "
          "docs.cleanrl.dev/rl-algorithms/pqn); transcribed, see peers/train/cleanrl_pqn_peer.py")
HYPERPARAMETERS = {
    "env_id": "CartPole-v1",
    "total_timesteps": 500_000,
    "learning_rate": 2.5e-4,
    "num_envs": 4,
    "num_steps": 128,
    "num_minibatches": 4,
    "update_epochs": 4,
    "anneal_lr": True,
    "gamma": 0.99,
    "start_e": 1.0,
    "end_e": 0.05,
    "exploration_fraction": 0.5,
    "max_grad_norm": 10.0,
    "q_lambda": 0.65,
    "torch_deterministic": True,
    "cuda": True,
}


def run_cleanrl_pqn(settings) -> dict:
    t_imp = time.perf_counter()
    gym = require("gymnasium")
    torch = require("torch")
    import numpy as np
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    if not hasattr(gym.vector, "AutoresetMode"):
        raise PeerUnavailable("gymnasium without AutoresetMode (needs >= 1.1)")
    import_s = time.perf_counter() - t_imp

    t_setup = time.perf_counter()
    hp = dict(HYPERPARAMETERS)
    n_envs, n_steps = hp["num_envs"], hp["num_steps"]
    batch = n_envs * n_steps
    minibatch = batch // hp["num_minibatches"]
    iterations = hp["total_timesteps"] // batch
    seed = settings.seed
    device = seed_all(torch, seed, hp)

    envs = sync_envs(gym, hp["env_id"], seed, n_envs)
    n_obs = int(np.array(envs.single_observation_space.shape).prod())
    n_act = int(envs.single_action_space.n)

    def init(layer):
        torch.nn.init.orthogonal_(layer.weight, np.sqrt(2))
        torch.nn.init.constant_(layer.bias, 0.0)
        return layer

    q_network = nn.Sequential(init(nn.Linear(n_obs, 120)), nn.LayerNorm(120), nn.ReLU(),
                              init(nn.Linear(120, 84)), nn.LayerNorm(84), nn.ReLU(),
                              init(nn.Linear(84, n_act))).to(device)
    optimizer = optim.RAdam(q_network.parameters(), lr=hp["learning_rate"])
    obs = torch.zeros((n_steps, n_envs, n_obs), device=device)
    actions = torch.zeros((n_steps, n_envs), device=device)
    rewards = torch.zeros((n_steps, n_envs), device=device)
    dones = torch.zeros((n_steps, n_envs), device=device)
    values = torch.zeros((n_steps, n_envs), device=device)

    judge = Judge(settings, greedy_policy(torch, q_network, device))
    setup_s = time.perf_counter() - t_setup
    duration = hp["exploration_fraction"] * hp["total_timesteps"]
    updates, global_step, iteration, stop = 0, 0, 0, False
    judge.start()
    next_obs, _ = envs.reset(seed=seed)
    next_obs = torch.Tensor(next_obs).to(device)
    next_done = torch.zeros(n_envs, device=device)
    while not stop:
        iteration += 1
        if hp["anneal_lr"]:
            frac = 1.0 - (min(iteration, iterations) - 1.0) / iterations
            optimizer.param_groups[0]["lr"] = frac * hp["learning_rate"]
        for step in range(n_steps):
            global_step += n_envs
            obs[step] = next_obs
            dones[step] = next_done
            epsilon = linear_schedule(hp["start_e"], hp["end_e"], duration, global_step)
            random_actions = torch.randint(0, n_act, (n_envs,)).to(device)
            with torch.no_grad():
                q_values = q_network(next_obs)
                max_actions = torch.argmax(q_values, dim=1)
                values[step] = q_values[torch.arange(n_envs), max_actions].flatten()
            explore = torch.rand((n_envs,)).to(device) < epsilon
            action = torch.where(explore, random_actions, max_actions)
            actions[step] = action
            o, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
            rewards[step] = torch.tensor(reward).to(device).view(-1)
            next_obs = torch.Tensor(o).to(device)
            next_done = torch.Tensor(np.logical_or(terminations, truncations)).to(device)
            if judge.should_stop(global_step, record_episodes(infos, judge)):
                stop = True
                break
        if stop:
            break
        with torch.no_grad():                       # Q(lambda) targets, as the script writes them
            returns = torch.zeros_like(rewards)
            for t in reversed(range(n_steps)):
                if t == n_steps - 1:
                    next_value, _ = torch.max(q_network(next_obs), dim=-1)
                    returns[t] = rewards[t] + hp["gamma"] * next_value * (1.0 - next_done)
                else:
                    nonterminal = 1.0 - dones[t + 1]
                    returns[t] = rewards[t] + hp["gamma"] * (
                        hp["q_lambda"] * returns[t + 1] + (1 - hp["q_lambda"]) * values[t + 1] * nonterminal)
        b_obs, b_actions, b_returns = obs.reshape((-1, n_obs)), actions.reshape(-1), returns.reshape(-1)
        b_inds = np.arange(batch)
        for _ in range(hp["update_epochs"]):
            np.random.shuffle(b_inds)
            for start in range(0, batch, minibatch):
                mb = b_inds[start:start + minibatch]
                old_val = q_network(b_obs[mb]).gather(1, b_actions[mb].unsqueeze(-1).long()).squeeze()
                loss = F.mse_loss(b_returns[mb], old_val)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(q_network.parameters(), hp["max_grad_norm"])
                optimizer.step()
                updates += 1
    envs.close()
    return {
        "library": "cleanrl (transcription)",
        "versions": {"cleanrl": "pqn.py at github 10334fa (transcribed; PyPI cleanrl 0.4.8 "
                                "has no pqn.py)",
                     **package_versions(["torch", "gymnasium", "numpy"])},
        "algorithm": "PQN",
        "hyperparameters": hp,
        "hyperparameters_source": SOURCE,
        "recipe_steps": hp["total_timesteps"],
        "continued_past_recipe": global_step > hp["total_timesteps"],
        "gradient_updates": updates,
        "import_s": import_s,
        "setup_s": setup_s,
        "threads": thread_info(torch),
        "how": ("transcription of CleanRL's pqn.py loop (our code, same steps and defaults), "
                "gymnasium SyncVectorEnv(autoreset SAME_STEP) + RecordEpisodeStatistics; "
                "greedy evaluation by argmax of its Q-network"),
        "_judge": judge,
    }
