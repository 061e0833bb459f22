/* The definition tests (support/definitions_suite.h) in the float build. */
#include "definitions_suite.h"

QKV_TEST_MAIN(definitions_suite)
