#include "driver.h"
extern const Chapter chapter00;
int main(int argc, char **argv) { return chapter_main(&chapter00, argc, argv); }
