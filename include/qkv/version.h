/* qkv/version.h — which qkv this is.
 *
 *     #if QKV_VERSION_MAJOR < 1                                 // at compile time
 *     puts("compiled with headers older than qkv 1.0");
 *     #endif
 *     printf("built with qkv %s, running %s\n", QKV_VERSION_STRING, qkv_version());
 *
 *     if (QKV_CHECK_VERSION() < 0) {                           // at run time
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *         return 1;
 *     }
 *
 * The macros say which headers a program was compiled with, qkv_version()
 * which library it runs with. Only a new ABI version may break programs
 * built against the old one: the major version from 1.0 on, and before it
 * (0.x, while the API still settles) every minor version. A program never
 * runs on a library of another ABI version: libqkv.so's SONAME carries it
 * (libqkv.so.1; libqkv.so.0.2 for 0.2.x), and every file that includes a qkv
 * header refers to qkv_library_abi_1 (qkv_library_abi_0_2), which only a
 * library of that ABI version defines, so the program fails to link or to
 * load, naming the version it needs. QKV_CHECK_VERSION() adds the minor
 * version at run time. CHANGELOG.md says what each version changed. The
 * Makefile reads the version from here.
 */
#ifndef QKV_VERSION_H
#define QKV_VERSION_H

#include "qkv/base.h"

#define QKV_VERSION_MAJOR 1
#define QKV_VERSION_MINOR 5
#define QKV_VERSION_PATCH 1

/* "MAJOR.MINOR.PATCH", e.g. "1.0.0". */
#define QKV_VERSION_STRING QKV_VERSION_STR_(QKV_VERSION_MAJOR) "." \
    QKV_VERSION_STR_(QKV_VERSION_MINOR) "." QKV_VERSION_STR_(QKV_VERSION_PATCH)
#define QKV_VERSION_STR_(n) QKV_VERSION_STR2_(n)
#define QKV_VERSION_STR2_(n) #n

/* The ABI version's symbol: qkv_library_abi_MAJOR, or qkv_library_abi_0_MINOR before 1.0. */
#define QKV_ABI_SYMBOL_(a, b) QKV_ABI_SYMBOL2_(a, b)
#define QKV_ABI_SYMBOL2_(a, b) qkv_library_abi_##a##b
#if QKV_VERSION_MAJOR == 0
#define QKV_ABI_SYMBOL QKV_ABI_SYMBOL_(0_, QKV_VERSION_MINOR)
#else
#define QKV_ABI_SYMBOL QKV_ABI_SYMBOL_(QKV_VERSION_MAJOR, )
#endif

QKV_BEGIN_DECLS

/* The version of the library the program runs with, as "MAJOR.MINOR.PATCH". */
const char *qkv_version(void);

/* 0 when a program built with the headers of qkv major.minor (what
 * QKV_CHECK_VERSION passes: its own) may run with this library: the same
 * major version and at least that minor one (before 1.0: the same minor
 * one); else -1 with a message naming both versions. */
int qkv_check_version(int major, int minor);

/* The ABI guard (see above): defined by the library, one name per ABI version. */
extern const int QKV_ABI_SYMBOL;

QKV_END_DECLS

/* Whether the library the program runs with fits the headers it was compiled with. */
#define QKV_CHECK_VERSION() qkv_check_version(QKV_VERSION_MAJOR, QKV_VERSION_MINOR)

#if defined(__GNUC__)
/* "used" keeps the reference even though nothing reads it. */
__attribute__((used)) static const int *const qkv_abi_guard = &QKV_ABI_SYMBOL;
#endif
#endif
