"""Run a server with everything its client sends copied to a file first: `tee.py LOG COMMAND...` (so a test can read
what a hostile pass put on a server's stdin)."""

import subprocess
import sys

with open(sys.argv[1], "ab") as log:
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE)
    try:
        while chunk := sys.stdin.buffer.read1(65536):
            log.write(chunk)
            log.flush()
            child.stdin.write(chunk)
            child.stdin.flush()
        child.stdin.close()
    except BrokenPipeError:
        pass
    sys.exit(child.wait())
