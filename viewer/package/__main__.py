"""``python -m profdiff``: the same launcher as the ``profdiff`` command."""

import sys

from profdiff.viewer.cli import main

if __name__ == "__main__":
    sys.exit(main())
