#include "driver.h"
extern const Chapter chapter02;
int main(int argc, char **argv) { return chapter_main(&chapter02, argc, argv); }
