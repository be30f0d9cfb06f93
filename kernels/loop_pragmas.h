// The kernels' loop pragmas. Self-contained (it includes nothing), so that kernels/tile/, the FA1
// and FA2 kernels and anything below them may use it without depending on kernels/algo/ or
// kernels/arch/ (docs/architecture.md, "Folders and what they may depend on"). Both expand to nothing
// outside nvcc: the host build's loops are the same loops.
#pragma once

// Full unrolling under nvcc. Required on every loop that indexes a register array (an array nvcc
// cannot index at run time moves to local memory; the `sass` test label holds the shipped kernels to
// none), and used on short loops with a compile-time trip count where unrolling folds the address
// arithmetic (the tile copies of kernels/tile/tile_copy.h).
#ifndef FP_UNROLL
#if defined(__CUDACC__)
#define FP_UNROLL _Pragma("unroll")
#else
#define FP_UNROLL
#endif
#endif

// A loop kept rolled under nvcc: one that indexes no register array (the head-dim steps of the
// products in kernels/tile/warp_products.h), where unrolling would only let the compiler hoist every
// step's loads ahead and raise register pressure.
#ifndef FP_ROLLED
#if defined(__CUDACC__)
#define FP_ROLLED _Pragma("unroll 1")
#else
#define FP_ROLLED
#endif
#endif
