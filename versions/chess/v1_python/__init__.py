"""v1_python: the chess baseline rung, python-chess and NumPy one game at a time."""
