#!/usr/bin/env bash
# The Compose Specification's JSON schema, which tests/test_deploy.py validates
# deploy/compose/compose.yaml against, offline. PyPI has it inside the docker-compose 1.29.2
# wheel (compose/config/compose_spec.json): pip downloads that wheel (about 115 kB, once)
# and only the schema is kept, as .venv/share/icemaint-schemas/compose_spec.json. Never
# committed. A no-op when it is there already.
#
#   scripts/compose-schema.sh [PYTHON]     # default: .venv/bin/python
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${1:-.venv/bin/python}
DEST=.venv/share/icemaint-schemas
SCHEMA=compose_spec.json
WHEEL=docker-compose==1.29.2

[ -s "$DEST/$SCHEMA" ] && exit 0

mkdir -p "$DEST"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "compose-schema: downloading $WHEEL for $SCHEMA" >&2
"$PYTHON" -m pip download -q --no-deps --only-binary :all: "$WHEEL" -d "$work" >&2
wheel=$(ls "$work"/docker_compose-*.whl)
# Write under a temporary name first, so an interrupted copy is never taken as the schema.
"$PYTHON" - "$wheel" "$DEST/.$SCHEMA.part" <<'PY'
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as wheel, open(sys.argv[2], "wb") as out:
    out.write(wheel.read("compose/config/compose_spec.json"))
PY
mv "$DEST/.$SCHEMA.part" "$DEST/$SCHEMA"
"$PYTHON" -c "import json, sys; json.load(open(sys.argv[1]))" "$DEST/$SCHEMA"
echo "compose-schema: $SCHEMA in $DEST" >&2
