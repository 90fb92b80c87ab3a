"""What a command's exit costs, with and without freezing the heap first (``entry.main``'s ``gc.freeze()``).

Runs ``loadtest report`` on a simulated run's folder and a 1-s ``loadtest run`` (an embedded Azurite, loopback only),
alternately as shipped and with ``gc.freeze`` made a no-op (the interpreter's last collection then walks every object
of Locust, pandas and matplotlib), and prints each one's median wall time and the ratio, measured side by side.

    .venv/bin/python bench/command_exit.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN = "import sys; from loadtest.command_line.entry import main; sys.argv = ['loadtest', *sys.argv[1:]]; sys.exit(main())"
UNFROZEN = "import gc; gc.freeze = lambda: None; " + RUN


def timed(code: str, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder, "run")
        subprocess.run(
            [sys.executable, "-m", "loadtest", "simulate", "--arrival-rate", "100", "-t", "10s", "--out", str(out)],
            check=True, capture_output=True,
        )  # fmt: skip
        commands = {"report": ("report", str(out)), "run -t 1s": ("run", "-t", "1s", "-u", "3", "-r", "3")}
        for name, command in commands.items():
            frozen, unfrozen = [], []
            for i in range(args.rounds):
                where = ("--out", str(Path(folder, f"{i}"))) if command[0] == "run" else ()
                frozen.append(timed(RUN, *command, *where))
                where = ("--out", str(Path(folder, f"{i}-unfrozen"))) if command[0] == "run" else ()
                unfrozen.append(timed(UNFROZEN, *command, *where))
            a, b = statistics.median(frozen), statistics.median(unfrozen)
            print(f"loadtest {name}, median of {args.rounds}: {a:.2f} s frozen at exit, {b:.2f} s without; "
                  f"{a - b:+.2f} s, ratio {a / b:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
