"""``python -m graphtrail``: the same as the ``graphtrail`` command."""

import sys

from graphtrail.cli import main

if __name__ == "__main__":
    sys.exit(main())
