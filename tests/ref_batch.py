#!/usr/bin/env python3
"""ref_batch.py - several runs of tools/siglip_ref.py in one interpreter, so
that its PyTorch start (about 2 s of a core) is paid once for all of them.

Each argument is one run's command line, split as the shell splits it; the
runs go in order, each exactly as `siglip_ref.py ARGS` would run (the tool
keeps no state between runs). Every run is made even when one fails; each
failure is named on stderr, and the exit status is the first failing run's.
"""
import os
import shlex
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import siglip_ref  # noqa: E402


def main(lines):
    status = 0
    for line in lines:
        try:
            rc = siglip_ref.main(shlex.split(line))
        except SystemExit as e:  # argparse's errors
            rc = e.code if isinstance(e.code, int) else 1
        except Exception:  # what would end the tool's own process
            traceback.print_exc()
            rc = 1
        if rc:
            print(f"ref_batch.py: siglip_ref.py {line}: exit status {rc}", file=sys.stderr)
            status = status or rc
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
