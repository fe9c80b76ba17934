// small_copy_floors [--bytes N] [--iterations N]: what one small copy costs on
// this GPU, from the call to the moment the host knows it is done, by each
// mechanism a staged (eager) message could use: the copy engine
// (cudaMemcpyAsync) waited for by stream synchronisation, by polling an
// event, or by polling a host word the stream writes after the copy; and a
// one-block kernel that moves the bytes itself (to or from mapped pinned
// memory, or with the bytes as its argument) and then writes that host
// word. One process, one GPU; prints a table (median and best, µs).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kMaxArgumentBytes = 256;

struct Payload {
  unsigned char bytes[kMaxArgumentBytes];
};

void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", call, cudaGetErrorString(error));
    std::exit(1);
  }
}

void check_driver(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) {
    const char* text = nullptr;
    cuGetErrorString(result, &text);
    std::fprintf(stderr, "%s failed: %s\n", call, text != nullptr ? text : "?");
    std::exit(1);
  }
}

// Copies `bytes` with one warp, then publishes `sequence` to the host word.
__global__ void copy_then_signal(unsigned char* to, const unsigned char* from, int bytes,
                                 volatile unsigned int* done, unsigned int sequence) {
  for (int i = threadIdx.x; i < bytes; i += blockDim.x) to[i] = from[i];
  __syncwarp();
  if (threadIdx.x == 0) {
    __threadfence_system();
    *done = sequence;
  }
}

// The bytes arrive as the kernel's argument: no read of host memory.
__global__ void store_argument_then_signal(unsigned char* to, Payload payload, int bytes,
                                           volatile unsigned int* done, unsigned int sequence) {
  for (int i = threadIdx.x; i < bytes; i += blockDim.x) to[i] = payload.bytes[i];
  __syncwarp();
  if (threadIdx.x == 0) {
    __threadfence_system();
    *done = sequence;
  }
}

void spin_until(volatile unsigned int* word, unsigned int value) {
  while (*word != value) {
  }
}

struct Result {
  std::string name;
  double median_us;
  double best_us;
};

Result time_it(const std::string& name, int iterations, const std::function<void(unsigned int)>& once) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations + 50; ++i) {
    const auto start = std::chrono::steady_clock::now();
    once(static_cast<unsigned int>(i + 1));
    const auto end = std::chrono::steady_clock::now();
    if (i >= 50) samples.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return {name, samples[samples.size() / 2], samples.front()};
}

}  // namespace

int main(int argc, char** argv) {
  int bytes = 8;
  int iterations = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
  }
  bytes = std::min(std::max(bytes, 1), kMaxArgumentBytes);
  check(cudaSetDevice(0), "cudaSetDevice");
  unsigned char* device = nullptr;
  unsigned char* device_other = nullptr;
  unsigned char* pinned = nullptr;
  unsigned int* word = nullptr;
  check(cudaMalloc(&device, 1 << 20), "cudaMalloc");
  check(cudaMalloc(&device_other, 1 << 20), "cudaMalloc");
  check(cudaHostAlloc(&pinned, 1 << 20, cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc");
  check(cudaHostAlloc(&word, 64, cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc");
  volatile unsigned int* done = word;
  *done = 0;
  cudaStream_t blocking = nullptr;
  cudaStream_t nonblocking = nullptr;
  check(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault), "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  Payload payload{};
  std::vector<Result> results;
  unsigned int sequence_base = 0;
  auto fresh = [&](unsigned int i) { return sequence_base + i; };
  auto next_round = [&]() { sequence_base += 1u << 20; };

  for (cudaStream_t stream : {blocking, nonblocking}) {
    const std::string kind = stream == blocking ? " (blocking stream)" : " (non-blocking stream)";
    results.push_back(time_it("D2H copy + stream sync" + kind, iterations, [&](unsigned int) {
      cudaMemcpyAsync(pinned, device, bytes, cudaMemcpyDeviceToHost, stream);
      cudaStreamSynchronize(stream);
    }));
    results.push_back(time_it("D2H copy + event poll" + kind, iterations, [&](unsigned int) {
      cudaMemcpyAsync(pinned, device, bytes, cudaMemcpyDeviceToHost, stream);
      cudaEventRecord(event, stream);
      while (cudaEventQuery(event) == cudaErrorNotReady) {
      }
    }));
    results.push_back(time_it("D2H copy + stream-written word" + kind, iterations, [&](unsigned int i) {
      cudaMemcpyAsync(pinned, device, bytes, cudaMemcpyDeviceToHost, stream);
      check_driver(cuStreamWriteValue32(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(word),
                                        fresh(i), CU_STREAM_WRITE_VALUE_DEFAULT),
                   "cuStreamWriteValue32");
      spin_until(done, fresh(i));
    }));
    next_round();
    results.push_back(time_it("D2H kernel to mapped memory + word" + kind, iterations, [&](unsigned int i) {
      copy_then_signal<<<1, 32, 0, stream>>>(pinned, device, bytes, done, fresh(i));
      spin_until(done, fresh(i));
    }));
    next_round();
    results.push_back(time_it("D2H kernel + stream sync" + kind, iterations, [&](unsigned int i) {
      copy_then_signal<<<1, 32, 0, stream>>>(pinned, device, bytes, done, fresh(i));
      cudaStreamSynchronize(stream);
    }));
    next_round();
    results.push_back(time_it("H2D copy + stream sync" + kind, iterations, [&](unsigned int) {
      cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, stream);
      cudaStreamSynchronize(stream);
    }));
    results.push_back(time_it("H2D kernel reading mapped memory + word" + kind, iterations, [&](unsigned int i) {
      copy_then_signal<<<1, 32, 0, stream>>>(device, pinned, bytes, done, fresh(i));
      spin_until(done, fresh(i));
    }));
    next_round();
    results.push_back(time_it("H2D bytes as kernel argument + word" + kind, iterations, [&](unsigned int i) {
      std::memcpy(payload.bytes, pinned, static_cast<std::size_t>(bytes));
      store_argument_then_signal<<<1, 32, 0, stream>>>(device, payload, bytes, done, fresh(i));
      spin_until(done, fresh(i));
    }));
    next_round();
    results.push_back(time_it("D2D copy + stream sync" + kind, iterations, [&](unsigned int) {
      cudaMemcpyAsync(device_other, device, bytes, cudaMemcpyDeviceToDevice, stream);
      cudaStreamSynchronize(stream);
    }));
    results.push_back(time_it("D2D kernel + word" + kind, iterations, [&](unsigned int i) {
      copy_then_signal<<<1, 32, 0, stream>>>(device_other, device, bytes, done, fresh(i));
      spin_until(done, fresh(i));
    }));
    next_round();
  }
  results.push_back(time_it("D2H cudaMemcpy (synchronous)", iterations, [&](unsigned int) {
    cudaMemcpy(pinned, device, bytes, cudaMemcpyDeviceToHost);
  }));
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaGetLastError(), "kernel launches");

  std::printf("small copies of %d bytes, %d iterations each, one process\n", bytes, iterations);
  std::printf("%-58s %10s %10s\n", "mechanism", "median us", "best us");
  for (const Result& result : results) {
    std::printf("%-58s %10.2f %10.2f\n", result.name.c_str(), result.median_us, result.best_us);
  }
  return 0;
}
