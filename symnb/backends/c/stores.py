"""Streaming (non-temporal) stores for the C dialect: results far larger than the caches are
written without first reading each line in (write-allocate)."""

from __future__ import annotations

#: ``sn_stream_copy(dst, src, bytes)``: non-temporal copy of whole 64-byte lines (``dst``
#: 64-byte aligned), where the target has streaming stores; SN_STREAM is 0 elsewhere and the
#: kernels keep normal stores. Compiler builtins rather than <immintrin.h>, whose parse with
#: -march=native cost 0.15 s per compiler run. The line type may alias (as the
#: intrinsics' types do): it reads a buffer written as doubles, floats or integers.
STREAM_COPY = """
#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define SN_STREAM 1
#if defined(__AVX512F__)
typedef long long sn_line_t
    __attribute__((vector_size(64), __may_alias__));
#elif defined(__AVX__)
typedef long long sn_line_t
    __attribute__((vector_size(32), __may_alias__));
#else
typedef long long sn_line_t
    __attribute__((vector_size(16), __may_alias__));
#endif
static inline void sn_stream_copy(char *dst, const char *src, int64_t bytes) {
    for (int64_t b = 0; b < bytes; b += (int64_t)sizeof(sn_line_t)) {
        sn_line_t v = *(const sn_line_t *)(src + b);
#if defined(__clang__)
        __builtin_nontemporal_store(v, (sn_line_t *)(dst + b));
#elif defined(__AVX512F__)
        __builtin_ia32_movntdq512((sn_line_t *)(dst + b), v);
#elif defined(__AVX__)
        __builtin_ia32_movntdq256((sn_line_t *)(dst + b), v);
#else
        __builtin_ia32_movntdq((sn_line_t *)(dst + b), v);
#endif
    }
}
static inline void sn_stream_fence(void) { __builtin_ia32_sfence(); }
#else
#define SN_STREAM 0
#endif
"""
