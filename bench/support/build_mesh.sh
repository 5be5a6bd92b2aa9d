#!/usr/bin/env bash
# build_mesh.sh: build Mesh (Powers et al., PLDI 2019; github.com/plasma-umass/Mesh) as a
# preloadable libmesh.so, for the Redis study's `mesh` row (docs/bench.md, "The Redis study").
#
# Mesh is not packaged by Debian, so the bench does not install it: this script clones it and
# Heap-Layers (its one dependency) at pinned commits and compiles the library with the compiler
# flags of Mesh's own CMake build (meshing on, free lists shuffled when a span is set up),
# without its test targets, which fetch googletest.
#
# usage: bash bench/support/build_mesh.sh [OUT]      (default OUT: bench/build/libmesh.so)
# Needs git, g++ and the network; MESH_GIT and HEAP_LAYERS_GIT name other clones (a mirror).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/../build/libmesh.so}"
MESH_GIT="${MESH_GIT:-https://github.com/plasma-umass/Mesh.git}"
HEAP_LAYERS_GIT="${HEAP_LAYERS_GIT:-https://github.com/emeryberger/Heap-Layers.git}"
# The versions measured in docs/decisions/018-redis-study-findings.md; Heap-Layers' is the one
# Mesh's CMake build pins.
MESH_COMMIT=2987f883b8695c07a80dc40da67c61f524460dfd
HEAP_LAYERS_COMMIT=b0b2c2c7c5553b79c534f55317a5ab3e7d011379

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
checkout() { # url commit dir
    git clone -q "$1" "$3"
    git -C "$3" -c advice.detachedHead=false checkout -q "$2"
}
checkout "$MESH_GIT" "$MESH_COMMIT" "$work/mesh"
checkout "$HEAP_LAYERS_GIT" "$HEAP_LAYERS_COMMIT" "$work/heap-layers"

src="$work/mesh/src"
mkdir -p "$(dirname "$OUT")"
g++ -O3 -std=c++17 -shared -fPIC -pthread -fvisibility=hidden \
    -fno-builtin-malloc -fno-builtin-free \
    -DMESHING_ENABLED=1 -DSHUFFLE_ON_INIT=1 -DSHUFFLE_ON_FREE=0 \
    -D_DEFAULT_SOURCE -D_BSD_SOURCE -D_XOPEN_SOURCE=700 -U_FORTIFY_SOURCE \
    -I"$src" -I"$work/heap-layers" \
    "$src"/{d_assert,global_heap,runtime,real,meshable_arena,measure_rss,thread_local_heap}.cc \
    "$src"/memory_stats_linux.cc "$src"/libmesh.cc \
    -o "$OUT" -ldl
echo "built $OUT (Mesh ${MESH_COMMIT:0:7}, Heap-Layers ${HEAP_LAYERS_COMMIT:0:7})"
