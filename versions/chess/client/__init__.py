"""The chess workload through Gymnasium: the id "ladder/Chess-v0" (registration.py), its vector
env (vector_env.py), single env (single_env.py), spaces (spaces.py) and the per-step steppers
(stepper.py, stepper.cpp). versions/chess/CLIENT.md shows the use."""
