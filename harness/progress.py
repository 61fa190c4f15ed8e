"""A one-line progress display on stderr (plain lines when stderr is not a terminal)."""
import sys
import time


class Progress:
    def __init__(self, label, total=None):
        self.label, self.total, self.done = label, total, 0
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self._len = 0

    def note(self, text):
        elapsed = time.perf_counter() - self.t0
        count = f"[{self.done}/{self.total}] " if self.total else ""
        line = f"{self.label} {count}{elapsed:6.1f}s  {text}"
        if self.tty:
            pad = max(0, self._len - len(line))
            sys.stderr.write("\r" + line + " " * pad)
            self._len = len(line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def step(self, text=""):
        self.done += 1
        self.note(text)

    def clear(self):
        if self.tty and self._len:
            sys.stderr.write("\r" + " " * self._len + "\r")
            sys.stderr.flush()
            self._len = 0
