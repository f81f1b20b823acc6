"""Lowering infrastructure every kernel family uses: the `Emitter`, element
codecs, loop nests, vectors, the kernel calling convention, parallel
launchers, the CBLAS/packed GEMM emitter and the llvmlite translation."""
