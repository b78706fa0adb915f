#include "driver.h"

extern const Chapter chapter01;

int main(int argc, char **argv) { return chapter_main(&chapter01, argc, argv); }
