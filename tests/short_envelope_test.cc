#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>

#include "protocol/short_envelope.h"

namespace cumpi::protocol {
namespace {

constexpr std::uint64_t kCookie = 0x0123456789abcdefULL;

TEST(ShortEnvelopeToken, DecodesToItsSenderAndSlot) {
  for (int sender : {0, 1, 77, (1 << 24) - 1}) {
    for (std::uint32_t slot : {0u, 1u, 2049u, kShortSlots - 1}) {
      const std::uint64_t word = token::first_word(kCookie, sender, 5, slot);
      int decoded_sender = -1;
      std::uint32_t decoded_slot = 0;
      ASSERT_TRUE(token::decode(kCookie, word, 5, &decoded_sender, &decoded_slot));
      EXPECT_EQ(decoded_sender, sender);
      EXPECT_EQ(decoded_slot, slot);
    }
  }
}

TEST(ShortEnvelopeToken, IsNotAcceptedByAnotherReceiverOrJob) {
  const std::uint64_t word = token::first_word(kCookie, 3, 5, 42);
  int sender = -1;
  std::uint32_t slot = 0;
  EXPECT_FALSE(token::decode(kCookie, word, 6, &sender, &slot));
  EXPECT_FALSE(token::decode(kCookie ^ 1, word, 5, &sender, &slot));
}

TEST(ShortEnvelopeToken, EverySlotHasItsOwnWord) {
  std::set<std::uint64_t> words;
  for (std::uint32_t slot = 0; slot < kShortSlots; ++slot) {
    words.insert(token::first_word(kCookie, 3, 5, slot));
  }
  EXPECT_EQ(words.size(), kShortSlots);
}

// Plain data is taken for a token only when it decodes to this receiver and
// the marker (1 in 2^28 by itself; the sender check makes it 1 in 2^52).
TEST(ShortEnvelopeToken, UserDataIsNotTakenForATokenByChance) {
  std::mt19937_64 random(12345);
  int accepted = 0;
  for (int i = 0; i < 1000000; ++i) {
    int sender = -1;
    std::uint32_t slot = 0;
    accepted += token::decode(kCookie, random(), 5, &sender, &slot) ? 1 : 0;
  }
  EXPECT_EQ(accepted, 0);
  int sender = -1;
  std::uint32_t slot = 0;
  for (std::uint64_t simple : {0ULL, 1ULL, ~0ULL, 0x3ff0000000000000ULL /* 1.0 */}) {
    EXPECT_FALSE(token::decode(kCookie, simple, 5, &sender, &slot)) << simple;
  }
}

TEST(ShortEnvelopeToken, SecondWordDependsOnTheFirst) {
  const std::uint64_t a = token::first_word(kCookie, 3, 5, 1);
  const std::uint64_t b = token::first_word(kCookie, 3, 5, 2);
  EXPECT_NE(token::second_word(kCookie, a), token::second_word(kCookie, b));
  EXPECT_NE(token::second_word(kCookie, a), a);
}

}  // namespace
}  // namespace cumpi::protocol
