"""``python -m segue`` runs the command line."""

import sys

from segue.cli.entry import main

sys.exit(main())
