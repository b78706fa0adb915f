/* ch02_test.h: chapter 02's tests: the shared attention test helpers and the chapter's own headers. */
#ifndef CH02_TEST_H
#define CH02_TEST_H

#include "../attention_test.h"
#include "../../02_flash_v1/ch02.h"
#include "../../02_flash_v1/kernels.h"
#include "../../02_flash_v1/tiles.h"

#endif
