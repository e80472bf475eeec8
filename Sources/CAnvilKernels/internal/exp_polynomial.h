#ifndef ANVIL_KERNELS_EXP_POLYNOMIAL_H
#define ANVIL_KERNELS_EXP_POLYNOMIAL_H

// The vector exp's constants, one definition for the AVX2 and AVX-512 activation bodies
// (x86_avx2/activation.c describes the fit): x = n·ln2 + r with ln2 split in a high part exact
// in float and a low correction, e^r = 1 + r + r²·P(r), P of degree 5, times 2^n. Each body
// writes the steps with its own intrinsics in the same order, so both give the same bits (the
// activation tests compare them bit for bit); the constants cannot drift apart.

/// Inputs below this give 0 (e^x would be under 2.4e-38), above `ANVIL_EXP_HIGHEST` +∞.
#define ANVIL_EXP_LOWEST (-86.6f)
#define ANVIL_EXP_HIGHEST 88.7228390f
/// log2(e), and ln 2 as a high part (exact in float) plus a low correction.
#define ANVIL_EXP_LOG2E 1.44269504088896341f
#define ANVIL_EXP_LN2_HIGH 0.693359375f
#define ANVIL_EXP_LN2_LOW (-2.12194440054690583e-4f)
/// P's coefficients, highest degree first (Horner's order).
#define ANVIL_EXP_P5 1.989961470e-04f
#define ANVIL_EXP_P4 1.393390507e-03f
#define ANVIL_EXP_P3 8.333298073e-03f
#define ANVIL_EXP_P2 4.166646261e-02f
#define ANVIL_EXP_P1 1.666666672e-01f
#define ANVIL_EXP_P0 5.000000014e-01f

#endif
