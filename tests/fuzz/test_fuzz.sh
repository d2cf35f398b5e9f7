#!/usr/bin/env bash
# A short fuzzing run of the protocol decoder and the plugstack parser.
exec "$(dirname "$0")/run-fuzz.sh" "${BUILD:-build}" "${FUZZ_SECONDS:-5}"
