"""Code every chess rung and the verifier share: the contract's constants (spec), the
action and observation encodings (encoding), the reference Q-network (net) and the
python-chess replay that judges a batch (replay)."""
