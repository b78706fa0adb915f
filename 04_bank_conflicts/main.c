#include "driver.h"
extern const Chapter chapter04;
int main(int argc, char **argv) { return chapter_main(&chapter04, argc, argv); }
