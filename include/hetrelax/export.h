/*
 * HR_API marks the functions of the public API. The library is built with hidden
 * visibility, so a shared libhetrelax exports these and nothing else; a static build
 * is unaffected.
 */
#ifndef HETRELAX_EXPORT_H
#define HETRELAX_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define HR_API __attribute__((visibility("default")))
#else
#define HR_API
#endif

#endif
