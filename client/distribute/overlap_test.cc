#include "client/distribute/overlap.h"

#include <string>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace distribute {
namespace {

void Add(DeviceStepStats* dev, const std::string& name, const std::string& op, int64_t start_us,
         int64_t end_us) {
  NodeExecStats* ns = dev->add_node_stats();
  ns->set_node_name(name);
  ns->set_timeline_label(name + " = " + op);
  ns->set_all_start_nanos(start_us * 1000);
  ns->set_all_end_rel_nanos((end_us - start_us) * 1000);
}

TEST(OverlapTest, AllReduceTimeBeforeTheLastGradientIsHidden) {
  StepStats stats;
  DeviceStepStats* dev = stats.add_dev_stats();
  dev->set_device("/job:worker/replica:0/task:0/device:CPU:0");
  Add(dev, "dense/MatMul", "MatMul", 0, 100);  // forward: not backprop
  Add(dev, "gradients/dense_1/MatMul_grad/MatMul", "MatMul", 200, 300);
  Add(dev, "replica_1/gradients/dense/MatMul_grad/MatMul_1", "MatMul", 300, 700);
  // Launched during backprop, done after it: 400 of 600 us hidden.
  Add(dev, "allreduce/CollectiveReduce", "CollectiveReduce", 300, 900);
  // Launched after it.
  Add(dev, "allreduce/CollectiveReduce_1", "CollectiveReduce", 750, 800);
  // A collective under a gradients scope is still an all-reduce.
  Add(dev, "gradients/allreduce/CollectiveReduce_2", "CollectiveReduce", 650, 690);
  const AllReduceOverlap o = MeasureAllReduceOverlap(stats);
  EXPECT_EQ(o.all_reduces, 3);
  EXPECT_EQ(o.started_in_backprop, 2);
  EXPECT_DOUBLE_EQ(o.backprop_ms, 0.5);
  EXPECT_DOUBLE_EQ(o.all_reduce_ms, 0.69);
  EXPECT_DOUBLE_EQ(o.hidden_ms, 0.44);
  EXPECT_EQ(o.ToString(),
            "3 all-reduces, 2 started during backprop; 0.44 of 0.69 ms hidden behind backprop "
            "(0.50 ms)");
}

TEST(OverlapTest, MicrosecondStatsAndEmptySteps) {
  EXPECT_EQ(MeasureAllReduceOverlap(StepStats()).ToString(),
            "0 all-reduces, 0 started during backprop; 0.00 of 0.00 ms hidden behind backprop "
            "(0.00 ms)");
  StepStats stats;
  DeviceStepStats* dev = stats.add_dev_stats();
  NodeExecStats* g = dev->add_node_stats();
  g->set_node_name("gradients/Mean_grad/Tile");
  g->set_all_start_micros(10);
  g->set_all_end_rel_micros(20);
  NodeExecStats* r = dev->add_node_stats();
  r->set_node_name("CollectiveReduce");
  r->set_timeline_label("CollectiveReduce = CollectiveReduce");
  r->set_all_start_micros(40);
  r->set_all_end_rel_micros(5);
  const AllReduceOverlap o = MeasureAllReduceOverlap(stats);
  EXPECT_EQ(o.all_reduces, 1);
  EXPECT_EQ(o.started_in_backprop, 0);
  EXPECT_DOUBLE_EQ(o.backprop_ms, 0.02);
  EXPECT_DOUBLE_EQ(o.hidden_ms, 0);
}

}  // namespace
}  // namespace distribute
}  // namespace tensorgrid
