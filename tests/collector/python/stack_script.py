# Run by test_python_stacks with gprof_pystack_probe on sys.path: captures Python stacks at known lines and prints
# what it got as JSON. The lines marked "# CAPTURE:<name>" are the lines the test expects in the trace.
import json
import sys
import threading

import gprof_pystack_probe as probe


def inner():
    return probe.capture()  # CAPTURE:inner


def middle():
    return inner()  # CAPTURE:middle


class Model:
    def forward(self):
        return middle()  # CAPTURE:forward


def with_gil():
    return probe.capture_with_gil()  # CAPTURE:with_gil


def deep(k):
    if k == 0:
        return probe.capture()  # CAPTURE:deep_bottom
    return deep(k - 1)  # CAPTURE:deep


def gen():
    yield probe.capture()  # CAPTURE:gen


def in_thread(out):
    out.append(probe.capture())  # CAPTURE:in_thread


def thread_depth(k, out):
    if k == 0:
        out.append(probe.capture())  # CAPTURE:thread_bottom
    else:
        thread_depth(k - 1, out)


def hammer(out):
    # Many threads capturing at once with the GIL released: the tables are shared.
    for _ in range(50):
        for k in range(20):
            row = []
            thread_depth(k, row)
            out.append((k, row[0]))


probe.start(sys.argv[1])
result = {"support": probe.support()}
ids = []
for _ in range(3):
    ids.append(Model().forward())  # CAPTURE:module
result["forward"] = ids
result["with_gil"] = with_gil()
result["deep"] = deep(100)
result["gen"] = next(gen())
result["native"] = probe.capture_on_native_thread()
got = []
t = threading.Thread(target=in_thread, args=(got,))
t.start()
t.join()
result["thread"] = got[0]
results = [[] for _ in range(4)]
threads = [threading.Thread(target=hammer, args=(r,)) for r in results]
for t in threads:
    t.start()
for t in threads:
    t.join()
result["hammer"] = [pair for r in results for pair in r]
result["counts"] = probe.counts()
result["summary"] = probe.summary()
# The same stack, from the same line, in this trace and then in a second one: the second trace's ids are its own.
result["twice"] = []
for i in range(2):
    if i == 1:
        probe.restart(sys.argv[1] + ".second")
    result["twice"].append(Model().forward())  # CAPTURE:twice
print(json.dumps(result))
probe.finish_at_exit(sys.argv[1] + ".at_exit")
