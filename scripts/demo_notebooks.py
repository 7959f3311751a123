"""Copy the example notebooks (and their data) for ``make demo``, never overwriting.

The demo runs on the copies, so running the notebooks (their outputs, JupyterLab's
autosave) leaves the clone clean; a copy the person changed is kept as it is, and a
notebook added to the examples later is copied the next time.

    python scripts/demo_notebooks.py notebooks playground
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def copy_missing(source: Path, target: Path) -> list[Path]:
    """Copies each file under ``source`` that ``target`` lacks; returns the new copies."""
    copied = []
    for path in sorted(source.rglob("*")):
        if not path.is_file() or ".ipynb_checkpoints" in path.parts:
            continue
        destination = target / path.relative_to(source)
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
        copied.append(destination)
    return copied


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    source, target = Path(argv[0]), Path(argv[1])
    copied = copy_missing(source, target)
    print(f"{target}/: {len(copied)} file(s) copied from {source}/, your own copies kept")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
