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

# The core is pure: no clocks, randomness, I/O, processes or threads, and no
# raw allocation outside its allocator wrapper (core/alloc.c), so that a test
# allocator can fail any allocation. Matches inside comments do not count
# (grep -n prints file:line:text; code_only drops the lines inside a block
# comment, strips the comments from the rest and keeps the lines whose code
# still matches the pattern $1).
code_only() {
  grep -vE '^[^:]+:[0-9]+:\s*(\*|/\*|//)' | sed -E 's#/\*([^*]|\*+[^*/])*\*+/##g; s#//.*$##' | grep -E "$1"
}
core_calls='time|clock|clock_gettime|gettimeofday|rand|rand_r|random|srand|getrandom|printf|fprintf|puts|fputs|fwrite|fopen|open|read|write|pthread_[a-z_]+|sleep|usleep|getenv|fork|vfork|exec[lv]p?e?|system|popen'
if grep -nE "\b($core_calls)\s*\(" -r src/core/ --include='*.[ch]' | code_only "\b($core_calls)\s*\("; then
  echo "check-style: src/core/ must stay free of clocks, randomness, I/O, processes and threads" >&2
  fail=1
fi
# (core.c's default allocator is libc; jobspec.c and testbuild.c build the
# caller's specs and test configurations, which the core copies, not its state.)
if grep -nE '(^|[^.>a-z_])(malloc|calloc|realloc|free|strdup|strndup)\s*\(' -r src/core/ --include='*.[ch]' |
     grep -vE '^src/core/(alloc|core|jobspec|testbuild)\.c:' |
     code_only '(^|[^.>a-z_])(malloc|calloc|realloc|free|strdup|strndup)\s*\('; then
  echo "check-style: src/core/ allocates only through its allocator (pxc_alloc, core/alloc.c)" >&2
  fail=1
fi
if grep -nE '#include <(pthread|time|unistd|sys/[a-z_]+)\.h>' -r src/core/ --include='*.[ch]'; then
  echo "check-style: src/core/ includes a header of clocks, I/O or threads" >&2
  fail=1
fi

# Layering: src/<layer>/ may include only its own layer and the ones above it.
layers=(util conf core svc store proto server agent sim cli)
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
# Inside the server, includes run one way (src/server/state.h draws the map):
# http/ -> loop/ -> journal/, nodes/ -> tables.h, server.h, auth/. A group
# includes the headers of the groups below it, never state.h (everything at
# once, for server.c alone) nor a header of a group above it.
server_below() { # dir, then the include patterns it may not use
  local dir=$1; shift
  local pattern=$(IFS='|'; echo "$*")
  grep -nE "#include \"server/($pattern)" -r "$dir" --include='*.[ch]'
}
if server_below src/server/http 'state\.h' ||
   server_below src/server/loop 'state\.h' 'api\.h' 'http/' ||
   server_below src/server/journal 'state\.h' 'api\.h' 'http/' 'loop/' ||
   server_below src/server/nodes 'state\.h' 'api\.h' 'http/' 'loop/' ||
   server_below src/server/auth 'state\.h' 'api\.h' 'http/' 'loop/' 'journal/' 'nodes/' 'tables\.h' ||
   grep -nE '#include "server/(state\.h|api\.h|http/|loop/|journal/|nodes/)' src/server/tables.h src/server/server.h; then
  echo "check-style: a server file includes a group above its own (order: http, loop, journal/nodes, tables)" >&2
  fail=1
fi
exit $fail
