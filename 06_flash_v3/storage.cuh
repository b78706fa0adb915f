/* storage.cuh: what chapter 06's launchers add to the 16-bit storage types (common/storage16.cuh): the DType of a
 * storage type, and the storage type of a kernel pointer. */
#ifndef FA_CH06_STORAGE_CUH
#define FA_CH06_STORAGE_CUH

#include "options.h" /* DType */
#include "storage16.cuh"

/* The launchers' side: the DType of the storage type T, and the T of a kernel pointer whose first parameter is a
 * const T * (Q), so that one generic lambda launches every instantiation with its own pointer casts. */
template <typename T>
inline constexpr DType storage_dtype = std::is_same_v<T, __half> ? DTYPE_FP16 : DTYPE_BF16;

template <typename F>
struct storage_of;
template <typename T, typename... Rest>
struct storage_of<void (*)(const T *, Rest...)> {
    using type = T;
};

#endif
