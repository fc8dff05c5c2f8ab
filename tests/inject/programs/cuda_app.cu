// Test program: a tiny CUDA app (one kernel, two copies). On a machine without a GPU or driver it prints the
// CUDA error and exits with 3; with a GPU it prints the sum and exits 0. The collector must change neither.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void add_one(int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

int main() {
    const int n = 1024;
    int host[n];
    for (int i = 0; i < n; ++i) host[i] = i;
    int* dev = nullptr;
    cudaError_t err = cudaMalloc(&dev, sizeof host);
    if (err != cudaSuccess) {
        std::printf("cuda unavailable: %s\n", cudaGetErrorName(err));
        return 3;
    }
    cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
    add_one<<<(n + 255) / 256, 256>>>(dev, n);
    cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(dev);
    long sum = 0;
    for (int i = 0; i < n; ++i) sum += host[i];
    std::printf("sum %ld\n", sum);
    return 0;
}
