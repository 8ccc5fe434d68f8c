// hash64: the splitmix64 finalizer on every element: 64-bit integer adds, xor-shifts
// and multiplies (mul.lo.u64), all wrapping modulo 2^64.
extern "C" __global__ void hash64(const unsigned long long* keys, unsigned long long* hashes, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long z = keys[i] + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        hashes[i] = z ^ (z >> 31);
    }
}
