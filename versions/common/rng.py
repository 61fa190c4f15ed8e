"""The counter-based RNG of WORKLOAD.md, in plain Python (ints mod 2^64).

Every version, in any language, draws from this same function of
(seed, stream, env, counter), so batches agree bit for bit.
"""

MASK = 0xFFFFFFFFFFFFFFFF
RESET, ACTION, EXPLORE = 1, 2, 3
TWO_M53 = 2.0 ** -53


def mix(x: int) -> int:
    """splitmix64 finaliser; mix(0) == 0xe220a8397b1dcdaf."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def key(seed: int, stream: int, env: int) -> int:
    return mix(mix(mix(seed) ^ stream) ^ env)


def draw(seed: int, stream: int, env: int, counter: int) -> int:
    return mix(key(seed, stream, env) ^ counter)


def u01(u: int) -> float:
    """A double in [0, 1) from the top 53 bits."""
    return (u >> 11) * TWO_M53


def reset_state(k_reset: int, episode: int) -> list:
    """Initial state of an episode, given the env's RESET key."""
    c = 4 * episode
    return [-0.05 + 0.1 * u01(mix(k_reset ^ (c + i))) for i in range(4)]


def random_action(k_action: int, t: int) -> int:
    return mix(k_action ^ t) >> 63


def explores(k_explore: int, t: int, epsilon: float) -> bool:
    return u01(mix(k_explore ^ t)) < epsilon
