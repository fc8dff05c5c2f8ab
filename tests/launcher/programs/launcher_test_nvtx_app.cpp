// A program that uses NVTX (header-only nvtx3) and no CUDA: its ranges must reach the injected library.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

int main() {
    nvtxDomainHandle_t domain = nvtxDomainCreateA("launcher-test");
    nvtxRangePushA("outer");
    nvtxMarkA("a mark");
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "inner";
    nvtxDomainRangePushEx(domain, &attr);
    nvtxDomainRangePop(domain);
    nvtxRangePop();
    nvtxDomainDestroy(domain);
    std::puts("nvtx app done");
    return 0;
}
