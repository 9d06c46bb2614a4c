"""`python -m wismo.servers DESIGN`: serve one design over stdio (the same as `wismo serve DESIGN`)."""

import sys

from ..cli import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
