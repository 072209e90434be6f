#include "fleetreap/report/outcome_detail.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(OutcomeDetailTest, RendersWordsAndValuesAndShapesOnTheValuesPlaces) {
  OutcomeDetail killed;
  killed.Count(8).Text(" killed (TERM ").Count(6).Text(", KILL ").Count(2).Text(")");
  EXPECT_EQ(killed.Render(), "8 killed (TERM 6, KILL 2)");
  EXPECT_EQ(killed.Shape(), "# killed (TERM #, KILL #)");
  OutcomeDetail ghost;
  ghost.Gpus({2, 6}).Text(" ghost memory (").Count(2048).Text(" MiB)");
  EXPECT_EQ(ghost.Render(), "GPUs 2,6 ghost memory (2048 MiB)");
  EXPECT_EQ(ghost.Shape(), "GPU @ ghost memory (# MiB)");
  EXPECT_EQ(OutcomeDetail().Gpus({3}).Text(" busy").Render(), "GPU 3 busy");
  // Adjacent words make one piece.
  EXPECT_EQ(OutcomeDetail::Words("a").Text("b").pieces().size(), 1U);
}

TEST(OutcomeDetailTest, AHostsDigitsAndMarksStayWords) {
  // "nvidia-smi exited 3" on one host and "exited 4" on another are two
  // stories, not one with a count; a host's own "#" is no value's mark.
  const OutcomeDetail three = OutcomeDetail::Words("command_failed: nvidia-smi exited 3");
  const OutcomeDetail four = OutcomeDetail::Words("command_failed: nvidia-smi exited 4");
  EXPECT_NE(three.Shape(), four.Shape());
  EXPECT_EQ(three.pieces().size(), 1U);
  EXPECT_NE(OutcomeDetail::Words("#").Shape(), OutcomeDetail().Count(1).Shape());
  EXPECT_NE(OutcomeDetail::Words("GPU @").Shape(), OutcomeDetail().Gpus({1}).Shape());
  EXPECT_EQ(OutcomeDetail::Words("a#b@c\\").Shape(), "a\\#b\\@c\\\\");
}

TEST(OutcomeDetailTest, JoinSkipsEmptyParts) {
  std::vector<OutcomeDetail> parts = {OutcomeDetail().Count(1).Text(" gone"), OutcomeDetail(),
                                      OutcomeDetail::Words("x")};
  EXPECT_EQ(JoinDetails(parts, ", ").Render(), "1 gone, x");
  EXPECT_TRUE(JoinDetails({}, ", ").empty());
}

}  // namespace
}  // namespace fleetreap
