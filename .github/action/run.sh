#!/usr/bin/env bash
# The GitHub Action's step: `blueprint check` with workflow annotations, then a review of the
# changed sets (blueprint diff --against) appended to the job summary. Runs anywhere bash and
# blueprint do; the inputs come as INPUT_* variables, as action.yml passes them.
set -uo pipefail

blueprint="${BLUEPRINT:-blueprint}"
summary="${GITHUB_STEP_SUMMARY:-/dev/stdout}"
config=()
[ -n "${INPUT_CONFIG:-}" ] && config=(--config "$INPUT_CONFIG")
read -r -a paths <<< "${INPUT_PATHS:-}"

"$blueprint" check "${config[@]}" --report github "${paths[@]}"
status=$?
if [ "$status" -eq 0 ]; then result=passed; else result=failed; fi
[ -n "${GITHUB_OUTPUT:-}" ] && echo "result=$result" >> "$GITHUB_OUTPUT"

if [ "${INPUT_REVIEW:-true}" = "true" ] && [ -n "${INPUT_AGAINST:-}" ]; then
  # a shallow checkout may not hold the base commit: fetch it alone
  if ! git cat-file -e "${INPUT_AGAINST}^{commit}" 2>/dev/null; then
    git fetch --quiet --depth=1 origin "$INPUT_AGAINST" || true
  fi
  review="$(mktemp)"
  "$blueprint" diff "${config[@]}" --against "$INPUT_AGAINST" "${paths[@]}" \
    --markdown "$review" --force > /dev/null
  compared=$?
  if [ "$compared" -le 1 ]; then
    cat "$review" >> "$summary"
  else
    echo "::warning title=blueprint review::could not compare the sets with $INPUT_AGAINST (exit $compared)"
  fi
  rm -f "$review"
fi
exit "$status"
