/*
 * px_test.h - what every cmocka test file includes: cmocka's required headers
 * in the order it needs them, plus small helpers shared by the tests.
 */
#ifndef PX_TEST_H
#define PX_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#endif
