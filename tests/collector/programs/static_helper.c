/* A statically linked helper (built with -static and -static-pie), as /sbin/ldconfig is on Ubuntu: no program
   interpreter, so no LD_PRELOAD and no collector can enter it. Prints its argument and exits 7. */
#include <stdio.h>

int main(int argc, char** argv) {
    printf("static helper: %s\n", argc > 1 ? argv[1] : "-");
    return 7;
}
