#include "driver.h"
extern const Chapter chapter06;
int main(int argc, char **argv) { return chapter_main(&chapter06, argc, argv); }
