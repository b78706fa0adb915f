#include "driver.h"

extern const Chapter chapter03;

int main(int argc, char **argv) { return chapter_main(&chapter03, argc, argv); }
