#!/usr/bin/env bash
# Bans unsafe calls everywhere and impure ones inside the scheduling core, and
# checks the layering rule (a layer includes only layers above it). Prints each
# offence as file:line and exits 1 when there is any.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0

# Unsafe everywhere in src/ (strcpy/sprintf overflow, atoi hides errors).
if grep -nE '\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atof)\s*\(' -r src/ --include='*.[ch]'; then
  echo "check-style: unsafe call above (use snprintf, strtol with error checks, ...)" >&2
  fail=1
fi

# The core is pure: no clocks, randomness, I/O, threads or raw allocation
# outside its allocator wrapper (core/alloc.c).
if grep -nE '\b(time|clock_gettime|gettimeofday|rand|random|srand|printf|fprintf|fopen|open|read|write|pthread_[a-z_]+|sleep|usleep|getenv)\s*\(' \
     -r src/core/ --include='*.[ch]' | grep -v '^\s*\*' ; then
  echo "check-style: src/core/ must stay free of clocks, randomness, I/O and threads" >&2
  fail=1
fi

# Layering: src/<layer>/ may include only its own layer and the ones above it.
layers=(util conf core store proto server agent sim cli)
for i in "${!layers[@]}"; do
  layer=${layers[$i]}
  below=("${layers[@]:$((i + 1))}")
  [ ${#below[@]} -eq 0 ] && continue
  pattern=$(IFS='|'; echo "${below[*]}")
  if grep -nE "#include \"($pattern)/" -r "src/$layer/" --include='*.[ch]'; then
    echo "check-style: src/$layer/ includes a layer below it (order: ${layers[*]})" >&2
    fail=1
  fi
done
exit $fail
