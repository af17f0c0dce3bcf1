"""Run the README's set-up commands exactly as written, in a folder of the caller's choosing.

The commands are read from the ```sh block under "## Set up", so a README that drifts from
what works fails CI. Each line is one command, run by bash on its own: a failure anywhere in a
line's `&&` chain stops the run with that line's exit status.

    python3 .ci/readme_setup.py README.md FOLDER     # run them in FOLDER (a fresh clone)
    python3 .ci/readme_setup.py README.md            # only print them
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

#: the README says "Two commands"; a block with another count is a drift too
EXPECTED = 2


def setup_commands(readme: str) -> list[str]:
    """The lines of the first ```sh block in the README's "## Set up" section."""
    section = re.search(r"^## Set up\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if section is None:
        raise SystemExit('the README has no "## Set up" section')
    block = re.search(r"^```sh\n(.*?)^```", section.group(1), re.M | re.S)
    if block is None:
        raise SystemExit('the README\'s "## Set up" section has no ```sh block')
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    if len(commands) != EXPECTED or any(line.rstrip().endswith("\\") for line in commands):
        raise SystemExit(f"the README's set-up block is not {EXPECTED} one-line commands")
    return commands


def main(argv: list[str]) -> int:
    commands = setup_commands(Path(argv[0]).read_text(encoding="utf-8"))
    if len(argv) < 2:
        print("\n".join(commands))
        return 0
    for number, command in enumerate(commands, start=1):
        print(f"README set-up, command {number}: {command}", flush=True)
        done = subprocess.run(["bash", "-c", command], cwd=argv[1], check=False)
        if done.returncode != 0:
            print(f"README set-up, command {number} exited {done.returncode}", file=sys.stderr)
            return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
