/* compiler.h - small compiler helpers shared by every layer. */
#ifndef LUNAR_BASE_COMPILER_H
#define LUNAR_BASE_COMPILER_H

#include <stddef.h>

#define likely(x)     __builtin_expect(!!(x), 1)
#define unlikely(x)   __builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#ifndef container_of /* DPDK's rte_common.h has the same one */
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#endif
#define LUNAR_PACKED __attribute__((packed))
#define LUNAR_UNUSED __attribute__((unused))
/* A function a profiler must see as its own (callgrind --toggle-collect). */
#define LUNAR_NOINLINE __attribute__((noinline))
/* Built with ThreadSanitizer (gcc's and clang's ways of saying so). */
#if defined(__SANITIZE_THREAD__)
#define LUNAR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LUNAR_TSAN 1
#endif
#endif

#endif
