/* qkv/version.h — which qkv this is.
 *
 *     #if QKV_VERSION_MAJOR == 0 && QKV_VERSION_MINOR < 2     // at compile time
 *     puts("compiled with headers older than qkv 0.2");
 *     #endif
 *     printf("built with qkv %s, running %s\n", QKV_VERSION_STRING, qkv_version());
 *
 *     if (QKV_CHECK_VERSION() < 0) {                           // at run time
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *         return 1;
 *     }
 *
 * The macros say which headers a program was compiled with, qkv_version()
 * which library it runs with. Only a new major version may break programs
 * built against the old one, and a program never runs on a library of
 * another major version: libqkv.so's SONAME carries the major version
 * (libqkv.so.1), and every file that includes a qkv header refers to
 * qkv_library_major_version_MAJOR, which only a library of that major
 * version defines, so the program fails to link or to load, naming the
 * version it needs. QKV_CHECK_VERSION() adds the minor version at run time.
 * The Makefile reads the version from here.
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

#define QKV_MAJOR_SYMBOL_(m) QKV_MAJOR_SYMBOL2_(m)
#define QKV_MAJOR_SYMBOL2_(m) qkv_library_major_version_##m
#define QKV_MAJOR_SYMBOL QKV_MAJOR_SYMBOL_(QKV_VERSION_MAJOR)

QKV_BEGIN_DECLS

/* The version of the library the program runs with, as "MAJOR.MINOR.PATCH". */
const char *qkv_version(void);

/* 0 when the library is of major version `major` and at least minor version
 * `minor` (what QKV_CHECK_VERSION passes: the headers' own); else -1 with a
 * message naming both versions. */
int qkv_check_version(int major, int minor);

/* The major-version guard (see above): defined by the library, one name per major version. */
extern const int QKV_MAJOR_SYMBOL;

QKV_END_DECLS

/* Whether the library the program runs with fits the headers it was compiled with. */
#define QKV_CHECK_VERSION() qkv_check_version(QKV_VERSION_MAJOR, QKV_VERSION_MINOR)

#if defined(__GNUC__)
/* "used" keeps the reference even though nothing reads it. */
__attribute__((used)) static const int *const qkv_major_guard = &QKV_MAJOR_SYMBOL;
#endif
#endif
