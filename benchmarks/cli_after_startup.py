"""A ``context-inspector`` process whose start-up is measured in the process itself.

``python benchmarks/cli_after_startup.py FD WARM-ARGS... -- ARGS...`` runs the command line once with
WARM-ARGS (the same command on a one-turn transcript: the interpreter, the imports and tiktoken's
encoding, which every run pays before its work), writes this process's CPU seconds so far (user +
system) to the file descriptor FD and closes it, then runs the command with ARGS exactly as the
``context-inspector`` entry does (:func:`inspector.cli.run`: the process ends once the output is
written). The caller reads the figure and subtracts it from the child's CPU seconds: what the command
costs after its start-up, in one process.

Why (``benchmarks/end_to_end.py`` (c)): subtracting the start-up measured in *another* process adds
that process's noise. On the shared 2-core machine, ten runs of the same one-turn command read
0.42-0.54 s of CPU (6 December 2026), so the cheapest of seven start-ups moved by about 0.05 s
between strategies in one run, a quarter of a 1 000-turn replay's net time; measured in the same
process, the 1 000- and 2 000-turn nets repeat within about 2 %.
"""

from __future__ import annotations

import os
import resource
import sys

from inspector.cli import main


def run(argv: list[str]) -> int:
    """Warm up with the arguments before ``--``, report the CPU so far to the descriptor, run the rest."""
    fd, rest = int(argv[0]), argv[1:]
    cut = rest.index("--")
    warm, args = rest[:cut], rest[cut + 1:]
    main(warm)
    used = resource.getrusage(resource.RUSAGE_SELF)
    os.write(fd, f"{used.ru_utime + used.ru_stime!r}\n".encode())
    os.close(fd)
    return main(args, end_process=True)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
