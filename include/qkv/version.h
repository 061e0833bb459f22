/* qkv/version.h — which qkv this is.
 *
 *     #if QKV_VERSION_MAJOR == 0 && QKV_VERSION_MINOR < 2     // at compile time
 *     puts("compiled with headers older than qkv 0.2");
 *     #endif
 *     printf("built with qkv %s, running %s\n", QKV_VERSION_STRING, qkv_version());
 *
 * The macros say which headers a program was compiled with, qkv_version()
 * which library it runs with. libqkv.so's SONAME carries the major version
 * (libqkv.so.0): a new major version is what may break programs built
 * against the old one. The Makefile reads the version from here.
 */
#ifndef QKV_VERSION_H
#define QKV_VERSION_H

#include "qkv/base.h"

#define QKV_VERSION_MAJOR 0
#define QKV_VERSION_MINOR 1
#define QKV_VERSION_PATCH 0

/* "MAJOR.MINOR.PATCH", e.g. "0.1.0". */
#define QKV_VERSION_STRING QKV_VERSION_STR_(QKV_VERSION_MAJOR) "." \
    QKV_VERSION_STR_(QKV_VERSION_MINOR) "." QKV_VERSION_STR_(QKV_VERSION_PATCH)
#define QKV_VERSION_STR_(n) QKV_VERSION_STR2_(n)
#define QKV_VERSION_STR2_(n) #n

QKV_BEGIN_DECLS

/* The version of the library the program runs with, as "MAJOR.MINOR.PATCH". */
const char *qkv_version(void);

QKV_END_DECLS
#endif
