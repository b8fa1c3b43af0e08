"""``python -m sitegen build OUT`` / ``python -m sitegen serve OUT [--port 0] [--latency-ms N]``."""

import sys

from sitegen.server import main

sys.exit(main())
