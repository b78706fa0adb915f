/* ch03_test.h: chapter 03's tests: the shared attention test helpers and the chapter's own headers. */
#ifndef CH03_TEST_H
#define CH03_TEST_H

#include "../attention_test.h"
#include "../../03_flash_v2/ch03.h"
#include "../../03_flash_v2/kernels.h"
#include "../../03_flash_v2/tiles.h"

#endif
