# Sourced by bench/run.sh and bench/instructions.sh: the real allocators
# they compare with.  Sets `lib` (name -> shared library to LD_PRELOAD) and
# `targets` (glibc, then every one of them that is installed; the caller
# adds heaplab's policies).  $1 names the caller in its messages.
libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A lib=( [jemalloc]="$libdir/libjemalloc.so.2" [mimalloc]="$libdir/libmimalloc.so.2"
                 [tcmalloc]="$libdir/libtcmalloc_minimal.so.4" )
targets=(glibc)
for t in jemalloc mimalloc tcmalloc; do
	if [ -r "${lib[$t]}" ]; then targets+=("$t"); else echo "$1: $t not installed (${lib[$t]}), left out" >&2; fi
done
