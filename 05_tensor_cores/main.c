#include "driver.h"
extern const Chapter chapter05;
int main(int argc, char **argv) { return chapter_main(&chapter05, argc, argv); }
