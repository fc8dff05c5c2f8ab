# A known answer for CPU sampling of Python (issue 35): two lines of the same cost per iteration, run 7 and 3 times
# as often, so 70 % and 30 % of the thread's CPU time. Chunk sizes vary at random (a loop in step with the kernel's
# tick would be sampled at a few of its phases only). A test double, never installed.
#   python hot_lines.py SECONDS
import random
import sys
import time


def spin(seconds):
    rng = random.Random(12345)
    a = b = 0
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        r = rng.randrange(200, 800)
        for i in range(7 * r): a += i * 3  # CAPTURE:hot_a
        for i in range(3 * r): b += i * 3  # CAPTURE:hot_b
    return a + b


if __name__ == "__main__":
    spin(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    print("done")
