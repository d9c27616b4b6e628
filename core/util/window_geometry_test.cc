#include "core/util/window_geometry.h"

#include <gtest/gtest.h>

#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

WindowDim Compute(int64_t input, int64_t window, int64_t stride, int64_t dilation, Padding p,
                  int64_t before = 0, int64_t after = 0) {
  auto dim = ComputeWindowDim(input, window, stride, dilation, p, before, after);
  EXPECT_TRUE(dim.ok()) << dim.status();
  return dim.ok() ? *dim : WindowDim{};
}

TEST(WindowGeometryTest, ValidCountsWholeWindowsOnly) {
  EXPECT_EQ(Compute(28, 3, 1, 1, Padding::kValid).output, 26);
  EXPECT_EQ(Compute(28, 3, 2, 1, Padding::kValid).output, 13);
  EXPECT_EQ(Compute(3, 3, 1, 1, Padding::kValid).output, 1);
  WindowDim dilated = Compute(10, 3, 1, 2, Padding::kValid);  // effective window 5
  EXPECT_EQ(dilated.EffectiveWindow(), 5);
  EXPECT_EQ(dilated.output, 6);
  EXPECT_EQ(dilated.pad_before + dilated.pad_after, 0);
}

TEST(WindowGeometryTest, SamePadsEvenlyWithTheOddOneAfter) {
  WindowDim d = Compute(28, 3, 2, 1, Padding::kSame);
  EXPECT_EQ(d.output, 14);  // ceil(28 / 2)
  EXPECT_EQ(d.pad_before, 0);
  EXPECT_EQ(d.pad_after, 1);
  d = Compute(7, 3, 1, 1, Padding::kSame);
  EXPECT_EQ(d.output, 7);
  EXPECT_EQ(d.pad_before, 1);
  EXPECT_EQ(d.pad_after, 1);
  d = Compute(5, 1, 2, 1, Padding::kSame);  // a window smaller than the stride needs none
  EXPECT_EQ(d.output, 3);
  EXPECT_EQ(d.pad_before + d.pad_after, 0);
  d = Compute(0, 3, 1, 1, Padding::kSame);
  EXPECT_EQ(d.output, 0);
}

TEST(WindowGeometryTest, ExplicitUsesTheGivenPadding) {
  WindowDim d = Compute(5, 3, 2, 1, Padding::kExplicit, 2, 1);
  EXPECT_EQ(d.pad_before, 2);
  EXPECT_EQ(d.pad_after, 1);
  EXPECT_EQ(d.output, 3);  // padded 8: taps at 0, 2, 4
}

TEST(WindowGeometryTest, BadValuesAreInvalidArgumentsSayingWhich) {
  EXPECT_STATUS(ComputeWindowDim(5, 0, 1, 1, Padding::kValid).status(), kInvalidArgument,
                "window size 0");
  EXPECT_STATUS(ComputeWindowDim(5, 3, 0, 1, Padding::kValid).status(), kInvalidArgument,
                "stride 0");
  EXPECT_STATUS(ComputeWindowDim(5, 3, 1, -2, Padding::kSame).status(), kInvalidArgument,
                "dilation -2");
  EXPECT_STATUS(ComputeWindowDim(2, 3, 1, 1, Padding::kValid).status(), kInvalidArgument,
                "output size would be negative");
  EXPECT_STATUS(ComputeWindowDim(5, 3, 1, 1, Padding::kExplicit, -1, 0).status(), kInvalidArgument,
                "explicit padding (-1, 0)");
}

TEST(WindowGeometryTest, ParsesTensorFlowsAttrValues) {
  Padding p;
  EXPECT_OK(ParsePadding("EXPLICIT", &p));
  EXPECT_EQ(p, Padding::kExplicit);
  EXPECT_STATUS(ParsePadding("same", &p), kInvalidArgument, "padding 'same'");
  DataFormat f;
  EXPECT_OK(ParseDataFormat("NCHW", &f));
  EXPECT_EQ(AxesOf(f).channels, 1);
  EXPECT_EQ(AxesOf(DataFormat::kNHWC).channels, 3);
  EXPECT_STATUS(ParseDataFormat("HWCN", &f), kInvalidArgument, "data_format 'HWCN'");
}

}  // namespace
}  // namespace tensorgrid
