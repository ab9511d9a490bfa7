"""``python -m segue`` runs the command line."""

import sys

from segue.cli.main import main

sys.exit(main())
