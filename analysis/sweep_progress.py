"""Progress of analysis/sweep.py: a bar with the ETA redrawn in place when stderr is a terminal,
a plain line every ~10 s or 10 % of the points otherwise (logs, CI, a Slurm job), nothing with
--quiet. Notes (a failed point, a verbose per-point line) print above the bar.

Python 3 standard library only. See docs/analysis.md.
"""

import shutil
import sys
import threading
import time


def format_duration(seconds):
    """'8.2 s', '3 min 05 s', '2 h 07 min'."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    seconds = int(round(seconds))
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def eta_seconds(total, done, ran, elapsed):
    """Time left: the points not done yet at the pace of the points simulated so far (cached
    points cost nothing and do not count); None before the first simulated point."""
    if ran <= 0:
        return None
    return (total - done) * elapsed / ran


class Progress:
    """mode: "bar" (a terminal), "lines" or "quiet"; "auto" picks bar or lines from the stream."""

    LINE_EVERY_S = 10.0
    TICK_S = 0.5

    def __init__(self, total, what="points", mode="auto", stream=None, clock=time.monotonic):
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "lines"
        self.mode = mode
        self.total = total
        self.what = what
        self.clock = clock
        self.start = clock()
        self.done = self.ran = self.failed = self.cached = 0
        self.extra = ""  # e.g. "3 tasks queued" while waiting for a Slurm job
        self._last_line = self.start
        self._last_decile = 0
        self._bar_shown = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if mode != "quiet" and total > 0:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def update(self, done=None, ran=None, failed=None, cached=None, extra=None):
        with self._lock:
            for name, value in (("done", done), ("ran", ran), ("failed", failed), ("cached", cached),
                                ("extra", extra)):
                if value is not None:
                    setattr(self, name, value)
            self._show(force_line=False)

    def point_finished(self, failed=False, cached=False):
        with self._lock:
            self.done += 1
            self.failed += bool(failed)
            self.cached += bool(cached)
            self.ran += not cached
            self._show(force_line=False)

    def note(self, text):
        """Prints `text` above the bar, except with --quiet (a verbose per-point line)."""
        self.print(text, always=False)

    def print(self, text, always=True):
        """Prints `text` above the bar, with --quiet too (a failure)."""
        if self.mode == "quiet" and not always:
            return
        with self._lock:
            self._clear()
            self.stream.write(text.rstrip("\n") + "\n")
            if self.mode == "bar":
                self._draw_bar()
            self.stream.flush()

    def finish(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        with self._lock:
            self._clear()
            self.stream.flush()

    def status(self):
        """'7/12 points (58 %), 1 failed, 3 cached, 4.1 s elapsed, ETA 2.9 s'."""
        elapsed = self.clock() - self.start
        pct = 100 * self.done // self.total if self.total else 100
        parts = [f"{self.done}/{self.total} {self.what} ({pct} %)"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.cached:
            parts.append(f"{self.cached} cached")
        if self.extra:
            parts.append(self.extra)
        parts.append(f"{format_duration(elapsed)} elapsed")
        eta = eta_seconds(self.total, self.done, self.ran, elapsed)
        if self.done < self.total:
            parts.append("ETA " + (format_duration(eta) if eta is not None else "?"))
        return ", ".join(parts)

    # -- internals (called with the lock held)

    def _show(self, force_line):
        if self.mode == "bar":
            self._draw_bar()
        elif self.mode == "lines":
            decile = 10 * self.done // self.total if self.total else 10
            now = self.clock()
            if force_line or decile > self._last_decile or now - self._last_line >= self.LINE_EVERY_S:
                self._last_decile = decile
                self._last_line = now
                self.stream.write(f"sweep.py: {self.status()}\n")
        self.stream.flush()

    def _draw_bar(self):
        status = self.status()
        columns = shutil.get_terminal_size((80, 24)).columns
        width = max(10, min(30, columns - 75))  # fixed while the status text grows and shrinks
        filled = width * self.done // self.total if self.total else width
        line = f"[{'#' * filled}{'.' * (width - filled)}] {status}"
        self.stream.write("\r" + line[:columns - 1] + "\x1b[K")
        self._bar_shown = True

    def _clear(self):
        if self._bar_shown:
            self.stream.write("\r\x1b[K")
            self._bar_shown = False

    def _tick(self):
        while not self._stop.wait(self.TICK_S):
            with self._lock:
                if self.mode == "bar":
                    self._draw_bar()
                    self.stream.flush()
                elif self.clock() - self._last_line >= self.LINE_EVERY_S:
                    self._show(force_line=True)
