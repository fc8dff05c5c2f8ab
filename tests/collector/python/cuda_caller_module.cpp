// A test double: the CPython extension module `gprof_cuda_caller`, whose launch() releases the GIL (as PyTorch's
// bindings do with gil_scoped_release) and then makes a CUDA call: a kernel launch through the CUPTI stand-in, after
// cuInit through the libcuda stand-in (which injects the collector as the driver does). Under gprof-run the
// collector sees the call on this thread with no GIL held. Never installed.
//
//   launch(kernel_name)  -> the call's correlation id
//
// Environment: GPROF_TEST_CUDA_STANDIN (the libcuda stand-in), GPROF_CUPTI_LIB (the CUPTI stand-in, which the
// collector loads).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

namespace {

using LaunchFn = uint32_t (*)(const char*, uint32_t);
LaunchFn g_launch = nullptr;

bool init_cuda() {
    if (g_launch) return true;
    const char* driver_path = std::getenv("GPROF_TEST_CUDA_STANDIN");
    void* driver = driver_path ? dlopen(driver_path, RTLD_NOW | RTLD_GLOBAL) : nullptr;
    auto cu_init = driver ? reinterpret_cast<int (*)(unsigned)>(dlsym(driver, "cuInit")) : nullptr;
    if (!cu_init || cu_init(0) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "gprof_cuda_caller: cuInit through GPROF_TEST_CUDA_STANDIN failed");
        return false;
    }
    const char* cupti = std::getenv("GPROF_CUPTI_LIB");
    void* standin = cupti ? dlopen(cupti, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    g_launch = standin ? reinterpret_cast<LaunchFn>(dlsym(standin, "gprof_test_standin_launch_kernel")) : nullptr;
    if (!g_launch) {
        PyErr_SetString(PyExc_RuntimeError, "gprof_cuda_caller: the CUPTI stand-in is not loaded (no collector?)");
        return false;
    }
    return true;
}

PyObject* launch(PyObject*, PyObject* args) {
    const char* name = nullptr;
    if (!PyArg_ParseTuple(args, "s", &name)) return nullptr;
    if (!init_cuda()) return nullptr;
    // The Python str's buffer, as a real program passes whatever it has: the stand-in keeps its own copy of the
    // name, as CUPTI does (e2e: "kernel names survive the caller's string").
    uint32_t correlation;
    Py_BEGIN_ALLOW_THREADS
    correlation = g_launch(name, 0);
    Py_END_ALLOW_THREADS
    return PyLong_FromUnsignedLong(correlation);
}

PyMethodDef methods[] = {
    {"launch", launch, METH_VARARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "gprof_cuda_caller", nullptr, -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_gprof_cuda_caller() { return PyModule_Create(&module); }
