// Writes known TensorBoard event files for tests/event_files_test.py, which
// reads them back with a reader of its own:
//
//   LOGDIR/direct  SummaryWriter: the graph (nodes "x", "twice"), then
//                  "loss" at steps 0..4 = 1.5, 0.75, -2.25, 2^-10, 2^127,
//                  then "loss" 0.5 and "accuracy" 0.875 in one event at step 5
//   LOGDIR/hook    MonitoredTrainingSession, summary_dir with
//                  save_summaries_steps 2: "twice" (x fed with the step
//                  number, doubled) and global_step/sec at steps 1, 3, 5
//
// usage: write_event_files LOGDIR
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/monitored_session.h"
#include "client/training/summary_writer.h"
#include "core/platform/status.h"

using namespace tensorgrid;  // NOLINT: a test program

namespace {

absl::Status WriteDirect(const std::string& dir) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Mul(root.WithOpName("twice"), x, 2.f);
  GraphDef graph;
  TG_RETURN_IF_ERROR(root.ToGraphDef(&graph));
  TG_ASSIGN_OR_RETURN(auto writer, training::SummaryWriter::Create(dir));
  TG_RETURN_IF_ERROR(writer->AddGraph(graph));
  const double losses[] = {1.5, 0.75, -2.25, std::ldexp(1.0, -10), std::ldexp(1.0, 127)};
  for (int step = 0; step < 5; ++step) {
    TG_RETURN_IF_ERROR(writer->AddScalar("loss", losses[step], step));
  }
  TG_RETURN_IF_ERROR(writer->AddScalars({{"loss", 0.5}, {"accuracy", 0.875}}, 5));
  return writer->Close();
}

absl::Status WriteFromHook(const std::string& dir) {
  Scope root = Scope::NewRootScope();
  training::Variable step = training::GetOrCreateGlobalStep(root);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto twice = ops::Mul(root.WithOpName("twice"), x, 2.f);
  auto train = ops::AssignAdd(root.WithOpName("train"), step.handle(), int64_t{1});
  training::MonitoredTrainingSessionOptions options;
  options.log_step_count_steps = 0;
  options.summary_dir = dir;
  options.save_summaries_steps = 2;
  options.summary_scalars = {{"twice", twice}};
  TG_ASSIGN_OR_RETURN(auto session, training::MonitoredTrainingSession::Create(root, options));
  for (int i = 1; i <= 5; ++i) {
    TG_RETURN_IF_ERROR(
        session->Run({{x, static_cast<float>(i)}}, {}, {train.operation}, nullptr));
  }
  return session->Close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_event_files LOGDIR\n");
    return 2;
  }
  const std::string logdir = argv[1];
  absl::Status s = WriteDirect(logdir + "/direct");
  if (s.ok()) s = WriteFromHook(logdir + "/hook");
  if (!s.ok()) {
    std::fprintf(stderr, "write_event_files: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
