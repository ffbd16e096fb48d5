// tracejit: generated from jit(grads)

#ifdef __CUDACC_RTC__
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#endif
#define TJ_FN static __device__ __forceinline__
// CUDA's pow and powf are within 2 ulps, and not always exact where the result is
// representable (an H100 missed NumPy's exact float64 results in the last bit). An integer
// exponent up to 64 multiplies instead, each product checked exact with an FMA (its exact
// rounding error must be 0, with the result far above the subnormals, where that error is
// representable), and 0.5 on a positive x is sqrt; anything else calls pow.
#define TJ_POW_EXACT_MIN 0x1p-969
TJ_FN bool tj_pow_by_products(double x, double y, double* out) {
  const double n = y < 0 ? -y : y;
  if (!(n <= 64.0) || n != (double)(int)n || x != x || x == 0.0 || isinf(x)) return false;
  double p = 1.0, b = x;
  for (int k = (int)n; k; k >>= 1) {
    if (k & 1) {
      const double q = p * b;
      if (fma(p, b, -q) != 0.0 || fabs(q) < TJ_POW_EXACT_MIN) return false;
      p = q;
    }
    if (k > 1) {
      const double s = b * b;
      if (fma(b, b, -s) != 0.0 || fabs(s) < TJ_POW_EXACT_MIN) return false;
      b = s;
    }
  }
  if (y < 0) {
    const double r = 1.0 / p;
    if (fma(r, p, -1.0) != 0.0 || fabs(r) < TJ_POW_EXACT_MIN) return false;
    p = r;
  }
  *out = p;
  return true;
}
TJ_FN double tj_pow(double x, double y) {
  double r;
  if (tj_pow_by_products(x, y, &r)) return r;
  if (y == 0.5 && x > 0) return sqrt(x);
  return (pow)(x, y);
}
TJ_FN float tj_powf(float x, float y) {
  double r;  // exact in double and representable as a float: exact
  if (tj_pow_by_products(x, y, &r) && (double)(float)r == r) return (float)r;
  if (y == 0.5f && x > 0) return sqrtf(x);
  return (powf)(x, y);
}
#define pow(x, y) tj_pow(x, y)
#define powf(x, y) tj_powf(x, y)


#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef short int16_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
#endif
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__device__)
#define TJ_MEMBER __device__ inline
#else
#define TJ_MEMBER inline
#endif
TJ_FN uint32_t tj_f32_bits(float f) { union { float f; uint32_t u; } v; v.f = f; return v.u; }
TJ_FN float tj_bits_f32(uint32_t u) { union { float f; uint32_t u; } v; v.u = u; return v.f; }
// float -> binary16, round to nearest even; NaN stays NaN (quiet), overflow gives Inf.
TJ_FN uint16_t tj_f32_to_f16(float f) {
  uint32_t u = tj_f32_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u >= 0x47800000u) return (uint16_t)(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (u < 0x38800000u) {  // a subnormal half or zero: the float add rounds the mantissa
    const float magic = tj_bits_f32(0x3f000000u);  // 0.5: aligns 10 bits at the bottom
    return (uint16_t)(sign | (tj_f32_bits(tj_bits_f32(u) + magic) - 0x3f000000u));
  }
  const uint32_t odd = (u >> 13) & 1u;
  u += 0xc8000fffu + odd;  // rebias the exponent (-112 << 23) and round
  return (uint16_t)(sign | (u >> 13));
}
TJ_FN float tj_f16_to_f32(uint16_t h) {
  uint32_t u = ((uint32_t)h & 0x7fffu) << 13;
  const uint32_t exp = u & 0x0f800000u;
  u += 0x38000000u;  // (127 - 15) << 23
  if (exp == 0x0f800000u) {
    u += 0x38000000u;  // Inf / NaN
  } else if (exp == 0) {
    u = tj_f32_bits(tj_bits_f32(u + 0x00800000u) - tj_bits_f32(0x38800000u));  // subnormal
  }
  return tj_bits_f32(u | (((uint32_t)h & 0x8000u) << 16));
}
// double -> float rounded to odd (truncated, the last bit set when inexact): rounding that to
// float16 gives the correctly rounded double -> float16 (24 >= 11 + 2 bits), as NumPy's.
TJ_FN float tj_f64_to_f32_odd(double d) {
  const float f = (float)d;
  if ((double)f == d || f != f) return f;
  uint32_t u = tj_f32_bits(f);
  if ((f < 0 ? -(double)f : (double)f) > (d < 0 ? -d : d)) u -= 1u;  // rounded up: truncate
  return tj_bits_f32(u | 1u);
}
// float -> bfloat16 (the top 16 bits), round to nearest even; NaN stays a quiet NaN.
TJ_FN uint16_t tj_f32_to_bf16(float f) {
  const uint32_t u = tj_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
TJ_FN float tj_bf16_to_f32(uint16_t h) { return tj_bits_f32((uint32_t)h << 16); }
struct tj_f16 {
  uint16_t bits;
  tj_f16() = default;
  TJ_MEMBER tj_f16(float f) : bits(tj_f32_to_f16(f)) {}
  TJ_MEMBER operator float() const { return tj_f16_to_f32(bits); }
  static TJ_MEMBER tj_f16 from_bits(uint16_t b) { tj_f16 h; h.bits = b; return h; }
};
struct tj_bf16 {
  uint16_t bits;
  tj_bf16() = default;
  TJ_MEMBER tj_bf16(float f) : bits(tj_f32_to_bf16(f)) {}
  TJ_MEMBER operator float() const { return tj_bf16_to_f32(bits); }
  static TJ_MEMBER tj_bf16 from_bits(uint16_t b) { tj_bf16 h; h.bits = b; return h; }
};

// complex64/complex128: NumPy's layout (real, imaginary); NumPy's formulas for * and /.
#define TJ_COMPLEX(C, R)                                                                   \
  struct C {                                                                               \
    R re, im;                                                                              \
    C() = default;                                                                         \
    TJ_MEMBER C(R r) : re(r), im(0) {}                                                     \
    TJ_MEMBER C(R r, R i) : re(r), im(i) {}                                                \
  };                                                                                       \
  TJ_FN C operator+(C a, C b) { return C(a.re + b.re, a.im + b.im); }                      \
  TJ_FN C operator-(C a, C b) { return C(a.re - b.re, a.im - b.im); }                      \
  TJ_FN C operator-(C a) { return C(-a.re, -a.im); }                                       \
  TJ_FN C operator*(C a, C b) {                                                            \
    return C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);                        \
  }                                                                                        \
  TJ_FN C operator/(C a, C b) { /* Smith's algorithm, as NumPy's loops */                 \
    const R ar = b.re < 0 ? -b.re : b.re, ai = b.im < 0 ? -b.im : b.im;                    \
    if (ar >= ai) {                                                                        \
      if (ar == 0 && ai == 0) return C(a.re / ar, a.im / ar);                              \
      const R rat = b.im / b.re, scl = (R)1 / (b.re + b.im * rat);                         \
      return C((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);                      \
    }                                                                                      \
    const R rat = b.re / b.im, scl = (R)1 / (b.im + b.re * rat);                           \
    return C((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);                        \
  }                                                                                        \
  TJ_FN bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; }                 \
  TJ_FN bool operator!=(C a, C b) { return !(a == b); }                                    \
  TJ_FN C tj_conj(C a) { return C(a.re, -a.im); }
TJ_COMPLEX(tj_c64, float)
TJ_COMPLEX(tj_c128, double)
#undef TJ_COMPLEX

template <class T> TJ_FN T tj_floordiv_int(T a, T b) {
  if (b == 0) return 0;
  // a / -1 is -a, negated in the unsigned type: INT_MIN / -1 traps, and a signed -INT_MIN is
  // undefined (NVRTC has no -fwrapv: sign(INT_MIN // -1) folded to 1 under CUDA)
  if ((T)-1 < (T)0 && b == (T)-1) return (T)(0ULL - (unsigned long long)a);
  T q = a / b;
  return ((a % b != 0) && ((a < 0) != (b < 0))) ? (T)(q - 1) : q;
}
template <class T> TJ_FN T tj_mod_int(T a, T b) {
  if (b == 0 || ((T)-1 < (T)0 && b == (T)-1)) return 0;
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
TJ_FN float tj_fmod(float a, float b) { return fmodf(a, b); }
TJ_FN double tj_fmod(double a, double b) { return fmod(a, b); }
TJ_FN float tj_floor(float a) { return floorf(a); }
TJ_FN double tj_floor(double a) { return floor(a); }
TJ_FN float tj_copysign(float a, float b) { return copysignf(a, b); }
TJ_FN double tj_copysign(double a, double b) { return copysign(a, b); }
// npy_divmod: the remainder takes the divisor's sign; the quotient is floor((a - mod) / b).
template <class T> TJ_FN T tj_mod_float(T a, T b) {
  T mod = tj_fmod(a, b);
  if (b == 0) return mod;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = tj_copysign((T)0, b);
  }
  return mod;
}
template <class T> TJ_FN T tj_floordiv_float(T a, T b) {
  if (b == 0) return a / b;
  T mod = tj_fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;
  if (div != 0) {
    T fl = tj_floor(div);
    if (div - fl > (T)0.5) fl += (T)1;
    return fl;
  }
  return tj_copysign((T)0, a / b);
}
// Integer power by squaring, wrapping; negative exponents give 0 except for bases 1 and -1.
template <class T> TJ_FN T tj_pow_int(T a, T b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2 == 0) ? 1 : -1;
    return 0;
  }
  T r = 1;
  while (b) {
    if (b & 1) r = (T)((unsigned long long)r * (unsigned long long)a);  // wraps, never UB
    a = (T)((unsigned long long)a * (unsigned long long)a);
    b >>= 1;
  }
  return r;
}
template <class T, class U> TJ_FN T tj_shl(T a, T b) {
  return ((U)b < (U)(sizeof(T) * 8)) ? (T)((U)a << (U)b) : (T)0;
}
template <class T, class U> TJ_FN T tj_shr(T a, T b) {
  if ((U)b < (U)(sizeof(T) * 8)) return (T)(a >> b);
  return a < 0 ? (T)-1 : (T)0;
}
// Float -> integer: NaN and out-of-range give the minimum integer, as x86's cvtt does.
template <class T, class F> TJ_FN T tj_float_to_int(F x, F lo, F hi) {
  return (x >= lo && x < hi) ? (T)x : (T)(((unsigned long long)1) << (sizeof(T) * 8 - 1));
}


template <class T, int N> struct alignas(sizeof(T) * N) tj_vec { T v[N]; };


// NumPy's reference: where(i < 0, i + n, i), then clip to [0, max(n - 1, 0)].
TJ_FN int64_t tj_clamp_index(int64_t i, int64_t n) {
  if (i < 0) i += n;
  if (i > n - 1) i = n - 1;
  if (i < 0) i = 0;
  return i;
}
// NumPy's a + b: integers wrap (through the unsigned type), bools add as ||.
template <class T> TJ_FN T tj_wrap_add(T a, T b) {  // every integer type, modulo 2**bits
  return (T)((unsigned long long)a + (unsigned long long)b);
}
TJ_FN bool tj_wrap_add(bool a, bool b) { return a || b; }
TJ_FN float tj_wrap_add(float a, float b) { return a + b; }
TJ_FN double tj_wrap_add(double a, double b) { return a + b; }
// NumPy's a * b: integers wrap (through the unsigned type), bools multiply as &&.
template <class T> TJ_FN T tj_wrap_mul(T a, T b) {  // every integer type, modulo 2**bits
  return (T)((unsigned long long)a * (unsigned long long)b);
}
TJ_FN bool tj_wrap_mul(bool a, bool b) { return a && b; }
TJ_FN float tj_wrap_mul(float a, float b) { return a * b; }
TJ_FN double tj_wrap_mul(double a, double b) { return a * b; }
// A complex product by the formula of NumPy's scalar loop (the one `accumulate` runs), its four
// products hidden from the optimizer: g++ 12 -O3 vectorizes a complex multiply into
// vfmaddsub (a fused multiply-add) even under -ffp-contract=off. NVRTC compiles with
// -fmad=false and has no such pattern.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define TJ_OPAQUE(v)
#elif defined(__x86_64__) || defined(__i386__)
#define TJ_OPAQUE(v) __asm__("" : "+x"(v))
#elif defined(__aarch64__)
#define TJ_OPAQUE(v) __asm__("" : "+w"(v))
#else
#define TJ_OPAQUE(v) __asm__("" : "+m"(v))
#endif
template <class C, class R> TJ_FN C tj_complex_mul(C a, C b) {
  R rr = a.re * b.re, ii = a.im * b.im, ri = a.re * b.im, ir = a.im * b.re;
  TJ_OPAQUE(rr); TJ_OPAQUE(ii); TJ_OPAQUE(ri); TJ_OPAQUE(ir);
  return C(rr - ii, ri + ir);
}
TJ_FN tj_c64 tj_wrap_mul(tj_c64 a, tj_c64 b) { return tj_complex_mul<tj_c64, float>(a, b); }
TJ_FN tj_c128 tj_wrap_mul(tj_c128 a, tj_c128 b) { return tj_complex_mul<tj_c128, double>(a, b); }
// argmax/argmin: is candidate (bv, bi) better than (av, ai)? The first NaN wins, then the
// extreme value, then the smaller index (NumPy returns the first occurrence).
template <class T> TJ_FN bool tj_arg_better(T bv, int64_t bi, T av, int64_t ai, bool is_max) {
  if (ai < 0) return bi >= 0;
  if (bi < 0) return false;
  bool an = av != av, bn = bv != bv;
  if (an || bn) return an && bn ? bi < ai : bn;
  if (bv == av) return bi < ai;
  return is_max ? bv > av : bv < av;
}
TJ_FN uint32_t tj_rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
// Threefry-2x32, 20 rounds (ir/threefry.py)
TJ_FN void tj_threefry_block(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1bd11bdau};
  x0 += ks[0];
  x1 += ks[1];
  x0 += x1;
  x1 = tj_rotl32(x1, 13) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 15) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 26) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 6) ^ x0;
  x0 += ks[1];
  x1 += ks[2] + 1u;
  x0 += x1;
  x1 = tj_rotl32(x1, 17) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 29) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 16) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 24) ^ x0;
  x0 += ks[2];
  x1 += ks[0] + 2u;
  x0 += x1;
  x1 = tj_rotl32(x1, 13) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 15) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 26) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 6) ^ x0;
  x0 += ks[0];
  x1 += ks[1] + 3u;
  x0 += x1;
  x1 = tj_rotl32(x1, 17) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 29) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 16) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 24) ^ x0;
  x0 += ks[1];
  x1 += ks[2] + 4u;
  x0 += x1;
  x1 = tj_rotl32(x1, 13) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 15) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 26) ^ x0;
  x0 += x1;
  x1 = tj_rotl32(x1, 6) ^ x0;
  x0 += ks[2];
  x1 += ks[0] + 5u;
}
// threefry2x32(key, counts) at pair i: counts split in two halves (odd n: a zero pads
// the second), out = concat(y0, y1)[:n]: pair i writes out[i] and out[i + half].
template <class K, class C>
TJ_FN void tj_threefry_pair(const K* key, const C* counts, int64_t* out, int64_t i,
                            int64_t n) {
  const uint32_t k0 = (uint32_t)(int64_t)key[0], k1 = (uint32_t)(int64_t)key[1];
  const int64_t half = (n + 1) / 2;
  const bool second = i + half < n;
  uint32_t x0 = (uint32_t)(int64_t)counts[i];
  uint32_t x1 = second ? (uint32_t)(int64_t)counts[i + half] : 0u;
  tj_threefry_block(k0, k1, x0, x1);
  out[i] = (int64_t)x0;
  if (second) out[i + half] = (int64_t)x1;
}


extern "C" __global__ void __launch_bounds__(256) k14_row(const tj_c128* __restrict__ b0, const tj_c128* __restrict__ b56, tj_c128* b59, const bool* __restrict__ b79, tj_c128* b89) {
  const int lane = threadIdx.x % 1;
  const int row = threadIdx.x / 1;
  const int u = (int)blockIdx.x * 256 + row;
  const bool active = u < 1;
  (void)lane; (void)row;
  tj_c128 c0[5];
  tj_c128 c1[5];
  bool c2[5];
  if (active) {
    #pragma unroll
    for (int it = 0; it < 5; ++it) {
      const int j = lane + (int)it * 1;
      const int i0 = j;
      c0[it] = b0[i0];
      c1[it] = b56[i0];
      c2[it] = b79[i0];
    }
  }
  // phase 0
  double a0 = 0, a0c = 0;
  double a1 = 0, a1c = 0;
  double a2 = 0, a2c = 0;
  double a3 = 0, a3c = 0;
  double a4 = 0, a4c = 0;
  double a5 = 0, a5c = 0;
  double a6 = 0, a6c = 0;
  if (active) {
    #pragma unroll
    for (int it = 0; it < 5; ++it) {
      const int j = lane + (int)it * 1;
      const int i0 = j;
      const tj_c128 p0_0 = c1[it];
      const tj_c128 p0_1 = (-p0_0);
      const double p0_2 = ((p0_1).re);
      const double p0_3 = ((p0_1).im);
      const bool p0_4 = c2[it];
      const bool p0_5 = (!(p0_4));
      const tj_c128 p0_6 = tj_c128(((double)(p0_5)));
      const double p0_7 = ((p0_6).re);
      const double p0_8 = ((p0_6).im);
      const tj_c128 p0_9 = c0[it];
      const tj_c128 p0_10 = (p0_9 * tj_c128(0x0.0p+0, 0x1.0000000000000p+0));
      const tj_c128 p0_11 = tj_conj(p0_9);
      const tj_c128 p0_12 = (p0_11 * p0_11);
      const tj_c128 p0_13 = (p0_10 + p0_12);
      const tj_c128 p0_14 = ((p0_4) ? (tj_c128(0x0.0p+0, 0x0.0p+0)) : (p0_13));
      const double p0_15 = ((p0_14).re);
      const double p0_16 = ((p0_14).im);
      const double p0_17 = ((double)(p0_5));
      {
        const double t = a0 + p0_2;
        const double p = t - a0;
        a0c += (a0 - (t - p)) + (p0_2 - p);
        a0 = t;
      }
      {
        const double t = a1 + p0_3;
        const double p = t - a1;
        a1c += (a1 - (t - p)) + (p0_3 - p);
        a1 = t;
      }
      {
        const double t = a2 + p0_7;
        const double p = t - a2;
        a2c += (a2 - (t - p)) + (p0_7 - p);
        a2 = t;
      }
      {
        const double t = a3 + p0_8;
        const double p = t - a3;
        a3c += (a3 - (t - p)) + (p0_8 - p);
        a3 = t;
      }
      {
        const double t = a4 + p0_15;
        const double p = t - a4;
        a4c += (a4 - (t - p)) + (p0_15 - p);
        a4 = t;
      }
      {
        const double t = a5 + p0_16;
        const double p = t - a5;
        a5c += (a5 - (t - p)) + (p0_16 - p);
        a5 = t;
      }
      {
        const double t = a6 + p0_17;
        const double p = t - a6;
        a6c += (a6 - (t - p)) + (p0_17 - p);
        a6 = t;
      }
    }
  }
  const double r0 = isfinite(a0) ? a0 + a0c : a0;
  const double r1 = isfinite(a1) ? a1 + a1c : a1;
  const double r2 = isfinite(a2) ? a2 + a2c : a2;
  const double r3 = isfinite(a3) ? a3 + a3c : a3;
  const double r4 = isfinite(a4) ? a4 + a4c : a4;
  const double r5 = isfinite(a5) ? a5 + a5c : a5;
  const double r6 = isfinite(a6) ? a6 + a6c : a6;
  // phase 1
  double a7 = 0, a7c = 0;
  double a8 = 0, a8c = 0;
  if (active) {
    #pragma unroll
    for (int it = 0; it < 5; ++it) {
      const int j = lane + (int)it * 1;
      const int i0 = j;
      const bool p1_0 = c2[it];
      const bool p1_1 = (!(p1_0));
      const double p1_2 = (r6 - 0x1.0000000000000p+0);
      const double p1_3 = (((p1_2) >= (0x0.0p+0) || (p1_2) != (p1_2)) ? (p1_2) : (0x0.0p+0));
      const double p1_4 = (0x1.0000000000000p+0 / p1_3);
      const tj_c128 p1_5 = c0[it];
      const tj_c128 p1_6 = (p1_5 * tj_c128(0x0.0p+0, 0x1.0000000000000p+0));
      const tj_c128 p1_7 = tj_conj(p1_5);
      const tj_c128 p1_8 = (p1_7 * p1_7);
      const tj_c128 p1_9 = (p1_6 + p1_8);
      const tj_c128 p1_10 = tj_c128(r4, r5);
      const tj_c128 p1_11 = tj_c128(r2, r3);
      const tj_c128 p1_12 = (p1_10 / p1_11);
      const tj_c128 p1_13 = (p1_9 - p1_12);
      const tj_c128 p1_14 = ((p1_1) ? (p1_13) : (tj_c128(0x0.0p+0, 0x0.0p+0)));
      const double p1_15 = ((p1_14).im);
      const double p1_16 = (p1_4 * p1_15);
      const double p1_17 = (p1_16 + p1_16);
      const double p1_18 = (-p1_17);
      const tj_c128 p1_19 = tj_c128(0x0.0p+0, p1_18);
      const double p1_20 = ((p1_14).re);
      const double p1_21 = (p1_4 * p1_20);
      const double p1_22 = (p1_21 + p1_21);
      const tj_c128 p1_23 = tj_c128(p1_22);
      const tj_c128 p1_24 = (p1_19 + p1_23);
      const tj_c128 p1_25 = ((p1_1) ? (p1_24) : (tj_c128(0x0.0p+0, 0x0.0p+0)));
      const tj_c128 p1_26 = (-p1_25);
      const double p1_27 = ((p1_26).re);
      const double p1_28 = ((p1_26).im);
      const tj_c128 p1_29 = c1[it];
      const tj_c128 p1_30 = tj_c128(r0, r1);
      const tj_c128 p1_31 = (p1_30 / tj_c128(0x1.4000000000000p+2, 0x0.0p+0));
      const tj_c128 p1_32 = (p1_29 + p1_31);
      const tj_c128 p1_33 = (p1_32 * p1_7);
      const tj_c128 p1_34 = (p1_33 + p1_33);
      const tj_c128 p1_35 = tj_conj(p1_34);
      const tj_c128 p1_36 = (p1_32 * tj_c128(0x1.0000000000000p+0, 0x1.0000000000000p+1));
      const tj_c128 p1_37 = (p1_35 + p1_36);
      {
        const double t = a7 + p1_27;
        const double p = t - a7;
        a7c += (a7 - (t - p)) + (p1_27 - p);
        a7 = t;
      }
      {
        const double t = a8 + p1_28;
        const double p = t - a8;
        a8c += (a8 - (t - p)) + (p1_28 - p);
        a8 = t;
      }
      b59[i0] = p1_37;
    }
  }
  const double r7 = isfinite(a7) ? a7 + a7c : a7;
  const double r8 = isfinite(a8) ? a8 + a8c : a8;
  // phase 2
  if (active) {
    #pragma unroll
    for (int it = 0; it < 5; ++it) {
      const int j = lane + (int)it * 1;
      const int i0 = j;
      const bool p2_0 = c2[it];
      const bool p2_1 = (!(p2_0));
      const double p2_2 = (r6 - 0x1.0000000000000p+0);
      const double p2_3 = (((p2_2) >= (0x0.0p+0) || (p2_2) != (p2_2)) ? (p2_2) : (0x0.0p+0));
      const double p2_4 = (0x1.0000000000000p+0 / p2_3);
      const tj_c128 p2_5 = c0[it];
      const tj_c128 p2_6 = (p2_5 * tj_c128(0x0.0p+0, 0x1.0000000000000p+0));
      const tj_c128 p2_7 = tj_conj(p2_5);
      const tj_c128 p2_8 = (p2_7 * p2_7);
      const tj_c128 p2_9 = (p2_6 + p2_8);
      const tj_c128 p2_10 = tj_c128(r4, r5);
      const tj_c128 p2_11 = tj_c128(r2, r3);
      const tj_c128 p2_12 = (p2_10 / p2_11);
      const tj_c128 p2_13 = (p2_9 - p2_12);
      const tj_c128 p2_14 = ((p2_1) ? (p2_13) : (tj_c128(0x0.0p+0, 0x0.0p+0)));
      const double p2_15 = ((p2_14).im);
      const double p2_16 = (p2_4 * p2_15);
      const double p2_17 = (p2_16 + p2_16);
      const double p2_18 = (-p2_17);
      const tj_c128 p2_19 = tj_c128(0x0.0p+0, p2_18);
      const double p2_20 = ((p2_14).re);
      const double p2_21 = (p2_4 * p2_20);
      const double p2_22 = (p2_21 + p2_21);
      const tj_c128 p2_23 = tj_c128(p2_22);
      const tj_c128 p2_24 = (p2_19 + p2_23);
      const tj_c128 p2_25 = ((p2_1) ? (p2_24) : (tj_c128(0x0.0p+0, 0x0.0p+0)));
      const tj_c128 p2_26 = tj_c128(r7, r8);
      const tj_c128 p2_27 = (p2_26 / p2_11);
      const tj_c128 p2_28 = ((p2_0) ? (tj_c128(0x0.0p+0, 0x0.0p+0)) : (p2_27));
      const tj_c128 p2_29 = (p2_25 + p2_28);
      const tj_c128 p2_30 = (p2_29 * p2_7);
      const tj_c128 p2_31 = (p2_30 + p2_30);
      const tj_c128 p2_32 = tj_conj(p2_31);
      const tj_c128 p2_33 = (p2_29 * tj_c128(0x0.0p+0, 0x1.0000000000000p+0));
      const tj_c128 p2_34 = (p2_32 + p2_33);
      b89[i0] = p2_34;
    }
  }
}
