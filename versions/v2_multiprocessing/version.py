"""v2_multiprocessing: v1's code in persistent worker processes, outputs in shared memory."""
NUMBER = "2"
TITLE = "Python, processes"
SUMMARY = ("v1's step in persistent worker processes, each owning a slice of the "
           "environments and writing its columns of the batch into shared memory")
PARALLEL = "workers"
SERIAL_BASE = "v1_python"   # the serial rung the report's crossover compares it with
MAX_WORKERS = 64
VERIFY_WORKERS = (1, 2, 3)


def available():
    import multiprocessing as mp
    if "forkserver" not in mp.get_all_start_methods():
        return "the forkserver start method is not available on this platform"
    return None


def make_generator(cfg):
    from .rollout import MultiprocessingGenerator
    return MultiprocessingGenerator(cfg)

