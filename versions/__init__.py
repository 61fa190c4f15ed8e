"""The rungs of the ladder (one folder each) and their shared code (versions/cartpole/common).

Importing this package registers the Gymnasium id "ladder/CartPole-v1"
(versions/cartpole/common/registration.py): gym.make_vec("ladder/CartPole-v1", num_envs=N,
version="v5b_simd") then gives RungVectorEnv. Gymnasium takes ~0.3 s to import, and rung
processes (v2's workers, v6's ranks) import this package without needing it, so the id is
registered now if gymnasium is already imported, else right after its import completes
(a one-shot import hook), never by importing gymnasium here.
"""
import importlib.abc
import importlib.machinery
import sys


def _register() -> None:
    try:
        from versions.cartpole.common.registration import register_ids
        register_ids()
    except Exception as e:      # registration must never break an import
        import warnings
        warnings.warn(f"versions: could not register ladder/CartPole-v1 with gymnasium: {e}")
    try:                        # and ladder/Chess-v0 (versions/chess/client/registration.py)
        from versions.chess.client.registration import register_ids as register_chess
        register_chess()
    except Exception as e:
        import warnings
        warnings.warn(f"versions: could not register ladder/Chess-v0 with gymnasium: {e}")


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds `gymnasium` as the path finder does and, once its module has run, registers."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "gymnasium":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module
        hook = self

        def exec_module(module):
            run(module)
            if hook in sys.meta_path:
                sys.meta_path.remove(hook)
            _register()
        spec.loader.exec_module = exec_module
        return spec


if "gymnasium" in sys.modules:
    _register()
elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
