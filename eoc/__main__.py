"""``python -m eoc`` runs the CLI."""

import sys

from eoc.cli.main import main

sys.exit(main())
