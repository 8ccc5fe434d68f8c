"""Write docs/run-schema.json: the JSON Schema of run.to_dict() / `gpusim run --json`
(gpusim.observe.export.run_schema; tests/test_exports.py checks the file is current)."""

from __future__ import annotations

import json
from pathlib import Path

from gpusim.observe.export import run_schema

OUT = Path(__file__).resolve().parents[1] / "docs" / "run-schema.json"


def main() -> None:
    OUT.write_text(json.dumps(run_schema(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
