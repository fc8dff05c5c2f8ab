/* glibc floor: keep binaries built here (glibc 2.36) runnable on glibc 2.34 (see docs/install.md).
 *
 * The static libstdc++ of GCC 12 (random.o, pulled in by every std::string user) calls arc4random, which only
 * glibc >= 2.36 has. This hidden definition satisfies that reference inside our own binary, so nothing asks for
 * arc4random@GLIBC_2.36. Hidden: in the collector (loaded into someone else's process) it must never interpose
 * the application's own arc4random. */
#include <stdint.h>
#include <sys/random.h>
#include <unistd.h>
#include <sys/syscall.h>

__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
    uint32_t v = 0;
    /* getrandom: GLIBC_2.25. Blocks only before the kernel pool is initialised (early boot). */
    while (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
    }
    return v;
}
