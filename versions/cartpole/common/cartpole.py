"""CartPole-v1 constants and the reference step, in plain Python floats (float64).

The order of floating-point operations is Gymnasium 1.x's `CartPoleEnv.step`, so
results agree with it to the last bit.
"""
import math

from core.spec import CARTPOLE

GRAVITY = 9.8
MASSCART = 1.0
MASSPOLE = 0.1
TOTAL_MASS = MASSPOLE + MASSCART
LENGTH = 0.5
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4
MAX_EPISODE_STEPS = CARTPOLE.max_episode_steps

ARRAY_NAMES = ("obs", "action", "reward", "next_obs", "terminated", "truncated")


def step(x, x_dot, theta, theta_dot, action):
    """One Euler step; returns the new state and whether the episode terminated."""
    force = FORCE_MAG if action == 1 else -FORCE_MAG
    costheta = math.cos(theta)
    sintheta = math.sin(theta)
    temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS)
    )
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    x = x + TAU * x_dot
    x_dot = x_dot + TAU * xacc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * thetaacc
    terminated = (x < -X_THRESHOLD or x > X_THRESHOLD
                  or theta < -THETA_THRESHOLD or theta > THETA_THRESHOLD)
    return x, x_dot, theta, theta_dot, terminated
