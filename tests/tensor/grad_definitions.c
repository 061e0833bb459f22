/* The definition tests (support/definitions_suite.h) in the double build:
 * every op and option against its plain-loop reference to 1e-12. */
#include "definitions_suite.h"

QKV_TEST_MAIN(definitions_suite)
