// The reduction kernels' arithmetic, run on the host as the emulation runs
// it: which ops MPI defines on which types, every defined pair against a
// plain fold, the fixed rank order, MAXLOC/MINLOC ties, complex products and
// an output that is one of the inputs.
#include "memory/reduction.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "memory/reduction_ops.h"

namespace cumpi::memory {
namespace {

ReductionJob job_of(std::vector<const void*> inputs, void* output, std::size_t count, ReductionType type,
                    ReductionOp op) {
  ReductionJob job;
  for (std::size_t i = 0; i < inputs.size(); ++i) job.inputs[i] = inputs[i];
  job.input_count = static_cast<int>(inputs.size());
  job.output = output;
  job.count = count;
  job.type = type;
  job.op = op;
  return job;
}

TEST(Reduction, DefinedWhereMpiDefinesTheOp) {
  EXPECT_TRUE(reduction_defined(ReductionType::int32, ReductionOp::sum));
  EXPECT_TRUE(reduction_defined(ReductionType::int32, ReductionOp::bxor));
  EXPECT_TRUE(reduction_defined(ReductionType::int32, ReductionOp::land));
  EXPECT_TRUE(reduction_defined(ReductionType::float64, ReductionOp::max));
  EXPECT_FALSE(reduction_defined(ReductionType::float64, ReductionOp::band));
  EXPECT_FALSE(reduction_defined(ReductionType::float32, ReductionOp::lor));
  EXPECT_TRUE(reduction_defined(ReductionType::complex128, ReductionOp::prod));
  EXPECT_FALSE(reduction_defined(ReductionType::complex64, ReductionOp::max));
  EXPECT_TRUE(reduction_defined(ReductionType::boolean, ReductionOp::lxor));
  EXPECT_FALSE(reduction_defined(ReductionType::boolean, ReductionOp::sum));
  EXPECT_TRUE(reduction_defined(ReductionType::double_int, ReductionOp::maxloc));
  EXPECT_FALSE(reduction_defined(ReductionType::double_int, ReductionOp::sum));
  EXPECT_FALSE(reduction_defined(ReductionType::int64, ReductionOp::minloc));
  EXPECT_EQ(element_bytes(ReductionType::double_int), 16U);
  EXPECT_EQ(element_bytes(ReductionType::short_int), 8U);
  EXPECT_EQ(element_bytes(ReductionType::complex64), 8U);
}

template <typename T>
std::vector<T> reduced(const std::vector<std::vector<T>>& inputs, ReductionType type, ReductionOp op) {
  std::vector<const void*> pointers;
  for (const auto& input : inputs) pointers.push_back(input.data());
  std::vector<T> output(inputs[0].size());
  reduce_on_host(job_of(pointers, output.data(), output.size(), type, op));
  return output;
}

TEST(Reduction, IntegerOpsFoldInRankOrder) {
  const std::vector<std::vector<int>> in = {{1, -2, 7, 0}, {3, 5, -7, 6}, {-4, 2, 1, 0}};
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::sum), (std::vector<int>{0, 5, 1, 6}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::prod), (std::vector<int>{-12, -20, -49, 0}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::min), (std::vector<int>{-4, -2, -7, 0}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::max), (std::vector<int>{3, 5, 7, 6}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::land), (std::vector<int>{1, 1, 1, 0}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::lor), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::lxor), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::band),
            (std::vector<int>{1 & 3 & -4, -2 & 5 & 2, 7 & -7 & 1, 0}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::bor),
            (std::vector<int>{1 | 3 | -4, -2 | 5 | 2, 7 | -7 | 1, 6}));
  EXPECT_EQ(reduced(in, ReductionType::int32, ReductionOp::bxor),
            (std::vector<int>{1 ^ 3 ^ -4, -2 ^ 5 ^ 2, 7 ^ -7 ^ 1, 6}));
  const std::vector<std::vector<std::uint8_t>> bytes = {{200, 1}, {100, 2}};
  EXPECT_EQ(reduced(bytes, ReductionType::uint8, ReductionOp::sum), (std::vector<std::uint8_t>{44, 3}));
  const std::vector<std::vector<unsigned long long>> wide = {{1ULL << 40}, {3}};
  EXPECT_EQ(reduced(wide, ReductionType::uint64, ReductionOp::bor),
            (std::vector<unsigned long long>{(1ULL << 40) | 3}));
}

TEST(Reduction, FloatingSumIsTheLeftFoldOfRankOrder) {
  // (1e16 + 1) + -1e16 is 0 in double; another order gives 1.
  const std::vector<std::vector<double>> in = {{1e16}, {1.0}, {-1e16}};
  EXPECT_EQ(reduced(in, ReductionType::float64, ReductionOp::sum)[0], (1e16 + 1.0) + -1e16);
  const std::vector<std::vector<float>> f = {{1.5F, -2.0F}, {2.0F, 0.25F}};
  EXPECT_EQ(reduced(f, ReductionType::float32, ReductionOp::prod), (std::vector<float>{3.0F, -0.5F}));
  EXPECT_EQ(reduced(f, ReductionType::float32, ReductionOp::min), (std::vector<float>{1.5F, -2.0F}));
}

TEST(Reduction, ComplexProductsAndSums) {
  using reduce_ops::Complex128;
  const std::vector<std::vector<Complex128>> in = {{{1, 2}}, {{3, -1}}, {{0, 1}}};
  const std::complex<double> expected =
      std::complex<double>(1, 2) * std::complex<double>(3, -1) * std::complex<double>(0, 1);
  const Complex128 product = reduced(in, ReductionType::complex128, ReductionOp::prod)[0];
  EXPECT_EQ(product.re, expected.real());
  EXPECT_EQ(product.im, expected.imag());
  const Complex128 sum = reduced(in, ReductionType::complex128, ReductionOp::sum)[0];
  EXPECT_EQ(sum.re, 4.0);
  EXPECT_EQ(sum.im, 2.0);
}

TEST(Reduction, LocTakesTheExtremeAndOnATieTheSmallerIndex) {
  using Pair = reduce_ops::ValueIndex<double>;
  const std::vector<std::vector<Pair>> in = {{{5.0, 2}, {1.0, 0}}, {{7.0, 1}, {1.0, 9}}, {{7.0, 0}, {3.0, 4}}};
  const auto max = reduced(in, ReductionType::double_int, ReductionOp::maxloc);
  EXPECT_EQ(max[0].value, 7.0);
  EXPECT_EQ(max[0].index, 0);
  EXPECT_EQ(max[1].value, 3.0);
  EXPECT_EQ(max[1].index, 4);
  const auto min = reduced(in, ReductionType::double_int, ReductionOp::minloc);
  EXPECT_EQ(min[0].value, 5.0);
  EXPECT_EQ(min[0].index, 2);
  EXPECT_EQ(min[1].value, 1.0);
  EXPECT_EQ(min[1].index, 0);
}

TEST(Reduction, BooleansTakeLogicalOps) {
  const bool a[3] = {true, false, true};
  const bool b[3] = {true, false, false};
  bool out[3] = {};
  reduce_on_host(job_of({a, b}, out, 3, ReductionType::boolean, ReductionOp::lxor));
  EXPECT_FALSE(out[0]);
  EXPECT_FALSE(out[1]);
  EXPECT_TRUE(out[2]);
  reduce_on_host(job_of({a, b}, out, 3, ReductionType::boolean, ReductionOp::land));
  EXPECT_TRUE(out[0]);
  EXPECT_FALSE(out[2]);
}

TEST(Reduction, OutputMayBeAnInput) {
  std::vector<long long> mine = {1, 2, 3};
  const std::vector<long long> other = {10, 20, 30};
  reduce_on_host(job_of({other.data(), mine.data()}, mine.data(), 3, ReductionType::int64, ReductionOp::sum));
  EXPECT_EQ(mine, (std::vector<long long>{11, 22, 33}));
}

TEST(Reduction, AnUndefinedPairLeavesTheOutputAlone) {
  const std::vector<float> a = {1.0F};
  std::vector<float> out = {-1.0F};
  reduce_on_host(job_of({a.data(), a.data()}, out.data(), 1, ReductionType::float32, ReductionOp::band));
  EXPECT_EQ(out[0], -1.0F);
}

}  // namespace
}  // namespace cumpi::memory
