"""``python -m xum`` runs the command line."""

import sys

from xum.cli.main import main

sys.exit(main())
