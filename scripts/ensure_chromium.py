"""Install Debian's chromium for the browser tests when it is missing.

Playwright's own browser download cannot work here, so the tests drive the
system chromium through ``executable_path``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


def main() -> int:
    if shutil.which("chromium"):
        return 0
    if os.geteuid() != 0:
        print("chromium is missing: run `sudo apt-get install -y chromium`", file=sys.stderr)
        return 1
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
