"""Frames of the study's CartPole drawn by Gymnasium's own CartPole renderer (pygame).

One gymnasium CartPoleEnv(render_mode="rgb_array") is kept, its state set to the
environment to draw, and its render() called: the picture is Gymnasium's, pixel for
pixel. Without pygame, Gymnasium's DependencyNotInstalled says so in one line.
"""
from __future__ import annotations

import os
from typing import Optional

import numpy as np

RENDER_MODES = ["rgb_array"]
RENDER_FPS = 50


def check_render_mode(render_mode: Optional[str]) -> Optional[str]:
    if render_mode is not None and render_mode not in RENDER_MODES:
        from versions.gym_adapter.errors import InvalidArgument
        raise InvalidArgument(f"render_mode must be None or 'rgb_array', got {render_mode!r} "
                              "(for a window, wrap the env in gymnasium's HumanRendering)")
    return render_mode


class CartPoleRenderer:
    def __init__(self):
        self._env = None

    def frame(self, state) -> np.ndarray:
        """An RGB frame uint8 [400, 600, 3] of one CartPole state (x, x_dot, theta, theta_dot)."""
        if self._env is None:
            # Gymnasium's renderer calls pygame.init(), which opens an audio device too
            # (ALSA errors on a headless machine): frames need none.
            os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
            os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
            from gymnasium.envs.classic_control.cartpole import CartPoleEnv
            self._env = CartPoleEnv(render_mode="rgb_array")
        self._env.state = np.asarray(state, dtype=np.float64).copy()
        return self._env.render()

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
