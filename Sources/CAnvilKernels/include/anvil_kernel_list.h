#ifndef ANVIL_KERNEL_LIST_H
#define ANVIL_KERNEL_LIST_H

// How the kernel lists (`../kernels/<op>.inc`, all of them in `../kernels/all.inc`) are read.
// They live outside `include/` so that every header including them expands them: a file under
// `include/` belongs to the module, and another module's header including it would import the
// module instead of expanding the list again. Each line of a list is one kernel:
//
//     ANVIL_KERNEL(name, widest, (parameters), (arguments), idle)
//
// - `name`: the entry point is `anvil_<name>(anvil_isa isa, parameters…)`, its bodies
//   `anvil_<name>_scalar`, `anvil_<name>_avx2` and `anvil_<name>_avx512` (each the entry point
//   without the `isa`), its field in `anvil_kernel_table` is `<name>`;
// - `widest`: `avx512` when the kernel has an AVX-512 body, `avx2` when the AVX-512 table holds
//   the AVX2 one (every kernel has a scalar and an AVX2 body);
// - `arguments`: the parameters' names, in order, as the entry point passes them on;
// - `idle`: an expression of the parameters, true when the call has nothing to do (the entry
//   point returns before looking the body up), or 0.
//
// Every kernel returns void: it writes its part of the output. A file includes a list after
// defining `ANVIL_KERNEL` as what it wants of each line, then undefines it.

/// The contents of a parenthesised list: `ANVIL_UNPARENTHESISED (a, b)` is `a, b`.
#define ANVIL_UNPARENTHESISED(...) __VA_ARGS__

/// `…` when `widest` is `avx512` (the kernel has an AVX-512 body of its own), else nothing.
#define ANVIL_IF_AVX512_BODY(widest, ...) ANVIL_IF_AVX512_BODY_##widest(__VA_ARGS__)
#define ANVIL_IF_AVX512_BODY_avx512(...) __VA_ARGS__
#define ANVIL_IF_AVX512_BODY_avx2(...)

/// A list line as the entry point's declaration (the op headers' expansion).
#define ANVIL_KERNEL_ENTRY(name, widest, parameters, arguments, idle)                                            \
    void anvil_##name(anvil_isa isa, ANVIL_UNPARENTHESISED parameters);

#endif
