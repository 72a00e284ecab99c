"""Where the tests find the repository and ../shared, wherever a test module sits."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
