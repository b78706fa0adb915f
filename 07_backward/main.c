#include "driver.h"

extern const Chapter chapter07;

int main(int argc, char **argv) { return chapter_main(&chapter07, argc, argv); }
