#ifndef ANVIL_ALLOCATION_COUNTER_H
#define ANVIL_ALLOCATION_COUNTER_H

/// Test support: counts heap allocations (malloc, calloc, realloc, aligned allocations) made
/// by any thread of a process that links this library. Linked only into the test bundle.

/// Allocations since the process started.
long anvil_allocation_count(void);

/// 1 when allocations are counted; 0 under a sanitizer, which owns malloc itself.
int anvil_allocation_counting_enabled(void);

#endif
