# A known answer for CPU sampling of Python (issue 35): two lines of the same cost per iteration, run 7 and 3 times
# as often, so about 70 % and 30 % of the thread's CPU time; each line's real share is measured with the thread's CPU
# clock and printed ("measured a=70.3 b=29.7"), and the test compares the sampled split with it. Chunk sizes vary at
# random (a loop in step with the kernel's tick would be sampled at a few of its phases only); the loop variables
# start at 1000, above CPython's cached small ints, so that both lines' iterations cost the same.
# A test double, never installed.
#   python hot_lines.py SECONDS
import random
import sys
import time


def spin(seconds):
    rng = random.Random(12345)
    clock = time.thread_time
    a = b = 0
    in_a = in_b = 0.0
    start = clock()
    while clock() - start < seconds:
        r = rng.randrange(200, 800)
        t0 = clock()
        for i in range(1000, 1000 + 7 * r): a += i * 3  # CAPTURE:hot_a
        t1 = clock()
        for i in range(1000, 1000 + 3 * r): b += i * 3  # CAPTURE:hot_b
        t2 = clock()
        in_a += t1 - t0
        in_b += t2 - t1
    return in_a, in_b


if __name__ == "__main__":
    in_a, in_b = spin(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    print("measured a=%.1f b=%.1f" % (100 * in_a / (in_a + in_b), 100 * in_b / (in_a + in_b)))
