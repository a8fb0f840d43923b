#!/usr/bin/env bash
# The two jars Spark needs to reach S3 through s3a:// in the tests: hadoop-aws and the AWS
# SDK (v1) bundle it was built against. On PyPI they exist only inside the
# sagemaker_pyspark 1.4.5 sdist, so pip downloads that sdist (181 MB, once) and only these
# two jars are kept, under .venv/share/icemaint-jars/. Never committed. A no-op when both
# are there already.
#
#   scripts/s3-jars.sh [PYTHON]     # default: .venv/bin/python
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${1:-.venv/bin/python}
DEST=.venv/share/icemaint-jars
JARS=(hadoop-aws-3.3.1.jar aws-java-sdk-bundle-1.11.901.jar)
SDIST=sagemaker_pyspark==1.4.5

have_all() {
  for jar in "${JARS[@]}"; do [ -s "$DEST/$jar" ] || return 1; done
}
have_all && exit 0

mkdir -p "$DEST"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "s3-jars: downloading $SDIST (about 180 MB) for ${JARS[*]}" >&2
"$PYTHON" -m pip download -q --no-deps --no-binary :all: "$SDIST" -d "$work" >&2
archive=$(ls "$work"/sagemaker_pyspark-*.tar.gz)
members=()
for jar in "${JARS[@]}"; do members+=("--wildcards" "*/deps/jars/$jar"); done
tar -xzf "$archive" -C "$work" "${members[@]}"
for jar in "${JARS[@]}"; do
  found=$(find "$work" -name "$jar" -type f | head -n1)
  [ -n "$found" ] || { echo "s3-jars: $jar is not in $archive" >&2; exit 1; }
  # Write under a temporary name first, so an interrupted copy is never taken as the jar.
  cp "$found" "$DEST/.$jar.part" && mv "$DEST/.$jar.part" "$DEST/$jar"
done
have_all
echo "s3-jars: ${JARS[*]} in $DEST" >&2
