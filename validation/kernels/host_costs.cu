// Host-side costs of the CUDA runtime on a real GPU, for gpusim's [launch] host costs (validation/hardware.py
// builds and runs this on the GPU machine; nothing in gpusim's runs or tests needs it). Prints one JSON object:
//   launch_us           CPU time of one cudaLaunchKernel of an empty 1-block kernel (10,000 back to back / N)
//   launch_sync_us      one launch followed by cudaStreamSynchronize, median of 2,000
//   device_kernel_us    device time per empty kernel launched back to back (events around 10,000 launches)
//   graph_node_us       device time per kernel node of a 1,000-node graph, replayed (events around the replay)
//   graph_launch_us     CPU time of one cudaGraphLaunch of that graph
//   graph_launch_sync_us  a 1-node graph launched and synchronised, median of 2,000
//   sync_us             cudaStreamSynchronize on an idle stream, median of 2,000
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty_kernel() {}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main()
{
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (int i = 0; i < 100; ++i) empty_kernel<<<1, 32, 0, s>>>();
    cudaStreamSynchronize(s);

    const int N = 10000;
    double t0 = now_us();
    for (int i = 0; i < N; ++i) empty_kernel<<<1, 32, 0, s>>>();
    double launch_us = (now_us() - t0) / N;
    cudaStreamSynchronize(s);

    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, s);
    for (int i = 0; i < N; ++i) empty_kernel<<<1, 32, 0, s>>>();
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, e0, e1);
    double device_kernel_us = ms * 1000.0 / N;

    std::vector<double> ls, ss;
    for (int i = 0; i < 2000; ++i) {
        double a = now_us();
        empty_kernel<<<1, 32, 0, s>>>();
        cudaStreamSynchronize(s);
        ls.push_back(now_us() - a);
        a = now_us();
        cudaStreamSynchronize(s);
        ss.push_back(now_us() - a);
    }

    const int NODES = 1000;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < NODES; ++i) empty_kernel<<<1, 32, 0, s>>>();
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0);
    cudaGraphLaunch(ge, s);
    cudaStreamSynchronize(s);
    std::vector<double> gn, gl;
    for (int r = 0; r < 20; ++r) {
        cudaEventRecord(e0, s);
        double a = now_us();
        cudaGraphLaunch(ge, s);
        gl.push_back(now_us() - a);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        gn.push_back(ms * 1000.0 / NODES);
    }

    cudaGraph_t g1;
    cudaGraphExec_t ge1;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    empty_kernel<<<1, 32, 0, s>>>();
    cudaStreamEndCapture(s, &g1);
    cudaGraphInstantiate(&ge1, g1, 0);
    std::vector<double> g1s;
    for (int i = 0; i < 2000; ++i) {
        double a = now_us();
        cudaGraphLaunch(ge1, s);
        cudaStreamSynchronize(s);
        g1s.push_back(now_us() - a);
    }
    cudaError_t err = cudaGetLastError();
    printf("{\"launch_us\": %.4f, \"launch_sync_us\": %.4f, \"device_kernel_us\": %.4f, \"graph_node_us\": %.4f, "
           "\"graph_launch_us\": %.4f, \"graph_launch_sync_us\": %.4f, \"sync_us\": %.4f, \"error\": \"%s\"}\n",
           launch_us, median(ls), device_kernel_us, median(gn), median(gl), median(g1s), median(ss),
           cudaGetErrorString(err));
    return err == cudaSuccess ? 0 : 1;
}
