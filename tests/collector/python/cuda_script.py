# Run under gprof-run by test_python_stacks: a CUDA call (a kernel launch through the stand-ins) made from a C
# extension that releases the GIL first, as PyTorch does, from nested Python functions. Prints the launch's
# correlation id; the trace's CallSite of that call must carry the Python stack below.
import gprof_cuda_caller


def launch_step():
    return gprof_cuda_caller.launch("_Z6kernelv")  # CAPTURE:launch


class Trainer:
    def step(self):
        return launch_step()  # CAPTURE:step


print(Trainer().step())  # CAPTURE:main
