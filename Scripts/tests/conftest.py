"""pytest setup for the anvil_convert tests: makes Scripts/ (the package) and
Scripts/fixtures/ (the fixture builders some tests reuse) importable without installing."""

import os
import sys

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.dirname(SCRIPTS)
FIXTURES = os.path.join(REPOSITORY, "Tests", "AnvilTests", "Fixtures")
# mnist/ and zoo/: read by several Swift test targets, so kept in the shared test-support target.
SHARED_FIXTURES = os.path.join(REPOSITORY, "Tests", "AnvilTestSupport", "Fixtures")

for path in (SCRIPTS, os.path.join(SCRIPTS, "fixtures")):
    if path not in sys.path:
        sys.path.insert(0, path)
