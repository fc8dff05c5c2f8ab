// A test double: the CPython extension module `gprof_pystack_probe`, which links the collector's Python stack
// reader (collector/python/) directly and writes what it finds into a trace of its own. Built for each CPython
// the build finds (tests/collector/python/CMakeLists.txt); never installed.
//
//   start(path)               opens a trace at path (a Pipeline of its own)
//   capture()                 current_python_stack() with the GIL released, as PyTorch calls CUDA; the id
//   capture_with_gil()        the same with the GIL held
//   capture_on_native_thread() the same on a thread Python never saw (a std::thread): must be 0
//   bench(n)                  n captures with the GIL released: nanoseconds per capture (steady clock)
//   support()                 python_support()
//   summary()                 python_stack_summary()
//   counts()                  python_stack_counts() as a dict
//   finish()                  writes the End record and closes the trace
//   restart(path)             finish(), then start(path): a second trace in the same process
//   finish_at_exit(path)      at the end of Py_FinalizeEx (Py_AtExit): one more capture, its id written to path,
//                             then finish(): a CUDA call made after the interpreter is gone
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <memory>
#include <thread>

#include "gprof/trace/header.h"
#include "pipeline/pipeline.h"
#include "python/python_stack.h"

namespace {

namespace py = gprof::collector::python;
std::unique_ptr<gprof::collector::Pipeline> g_pipeline;

PyObject* start(PyObject*, PyObject* args) {
    const char* path = nullptr;
    if (!PyArg_ParseTuple(args, "s", &path)) return nullptr;
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    // The new pipeline is made while the old one still exists: another object, another address (a trace is known
    // to collector/python/ by its pipeline).
    g_pipeline = std::make_unique<gprof::collector::Pipeline>();
    gprof::trace::HeaderInfo header;
    header.producer = "gprof_pystack_probe (test)";
    header.pid = ::getpid();
    header.executable = "python";
    if (!g_pipeline->start(fd, header, {})) {
        PyErr_SetString(PyExc_RuntimeError, "pipeline did not start");
        return nullptr;
    }
    Py_RETURN_NONE;
}

bool started() {
    if (g_pipeline) return true;
    PyErr_SetString(PyExc_RuntimeError, "start() first");
    return false;
}

PyObject* capture(PyObject*, PyObject*) {
    if (!started()) return nullptr;
    uint32_t id;
    Py_BEGIN_ALLOW_THREADS
    id = py::current_python_stack(*g_pipeline);
    Py_END_ALLOW_THREADS
    return PyLong_FromUnsignedLong(id);
}

PyObject* capture_with_gil(PyObject*, PyObject*) {
    if (!started()) return nullptr;
    return PyLong_FromUnsignedLong(py::current_python_stack(*g_pipeline));
}

PyObject* capture_on_native_thread(PyObject*, PyObject*) {
    if (!started()) return nullptr;
    uint32_t id = 12345;
    Py_BEGIN_ALLOW_THREADS
    std::thread([&] { id = py::current_python_stack(*g_pipeline); }).join();
    Py_END_ALLOW_THREADS
    return PyLong_FromUnsignedLong(id);
}

PyObject* bench(PyObject*, PyObject* args) {
    long n = 0;
    if (!PyArg_ParseTuple(args, "l", &n) || !started()) return nullptr;
    uint64_t sum = 0;
    std::chrono::steady_clock::duration took{};
    Py_BEGIN_ALLOW_THREADS
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) sum += py::current_python_stack(*g_pipeline);
    took = std::chrono::steady_clock::now() - t0;
    Py_END_ALLOW_THREADS
    if (sum == 0) {
        PyErr_SetString(PyExc_RuntimeError, "no Python stack captured");
        return nullptr;
    }
    return PyFloat_FromDouble(std::chrono::duration<double, std::nano>(took).count() / static_cast<double>(n));
}

PyObject* support(PyObject*, PyObject*) { return PyUnicode_FromString(py::python_support()); }
PyObject* summary(PyObject*, PyObject*) { return PyUnicode_FromString(py::python_stack_summary().c_str()); }

PyObject* counts(PyObject*, PyObject*) {
    auto c = py::python_stack_counts();
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:I,s:I}", "captured", c.captured, "no_python", c.no_python,
                         "truncated", c.truncated, "frames_full", c.frames_full, "stacks_full", c.stacks_full,
                         "py_frames", c.py_frames, "py_stacks", c.py_stacks);
}

// finish() and start(path): a second trace in the same process (ids start again at 1, records written again).
PyObject* restart(PyObject* self, PyObject* args) {
    if (!started()) return nullptr;
    Py_BEGIN_ALLOW_THREADS
    g_pipeline->finish();
    Py_END_ALLOW_THREADS
    return start(self, args);
}

PyObject* finish(PyObject*, PyObject*) {
    if (!started()) return nullptr;
    Py_BEGIN_ALLOW_THREADS
    g_pipeline->finish();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

std::string g_at_exit_path;

void at_exit() {
    uint32_t id = py::current_python_stack(*g_pipeline);
    if (FILE* f = std::fopen(g_at_exit_path.c_str(), "w")) {
        std::fprintf(f, "%u\n", id);
        std::fclose(f);
    }
    g_pipeline->finish();
}

PyObject* finish_at_exit(PyObject*, PyObject* args) {
    const char* path = nullptr;
    if (!PyArg_ParseTuple(args, "s", &path) || !started()) return nullptr;
    g_at_exit_path = path;
    if (Py_AtExit(at_exit) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "Py_AtExit refused");
        return nullptr;
    }
    Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"finish_at_exit", finish_at_exit, METH_VARARGS, nullptr},
    {"start", start, METH_VARARGS, nullptr},
    {"capture", capture, METH_NOARGS, nullptr},
    {"capture_with_gil", capture_with_gil, METH_NOARGS, nullptr},
    {"capture_on_native_thread", capture_on_native_thread, METH_NOARGS, nullptr},
    {"bench", bench, METH_VARARGS, nullptr},
    {"support", support, METH_NOARGS, nullptr},
    {"summary", summary, METH_NOARGS, nullptr},
    {"counts", counts, METH_NOARGS, nullptr},
    {"finish", finish, METH_NOARGS, nullptr},
    {"restart", restart, METH_VARARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "gprof_pystack_probe", nullptr, -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_gprof_pystack_probe() { return PyModule_Create(&module); }
