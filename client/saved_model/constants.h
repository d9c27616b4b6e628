// The names TensorFlow gives the parts of a SavedModel directory and graph
// (tensorflow/cc/saved_model/constants.h, signature_constants.h and
// tag_constants.h): what LoadSavedModel looks for and SavedModelBuilder
// writes. docs/saved_model.md.
#ifndef TENSORGRID_CLIENT_SAVED_MODEL_CONSTANTS_H_
#define TENSORGRID_CLIENT_SAVED_MODEL_CONSTANTS_H_

namespace tensorgrid {

// Files and directories under an export directory.
inline constexpr char kSavedModelFilenamePb[] = "saved_model.pb";
inline constexpr char kSavedModelFilenamePbTxt[] = "saved_model.pbtxt";
inline constexpr char kSavedModelVariablesDirectory[] = "variables";
inline constexpr char kSavedModelVariablesFilename[] = "variables";  // the checkpoint prefix
inline constexpr char kSavedModelAssetsDirectory[] = "assets";
inline constexpr int kSavedModelSchemaVersion = 1;

// Collections and signature keys of a MetaGraphDef.
inline constexpr char kSavedModelAssetsKey[] = "saved_model_assets";  // AssetFileDefs (Any)
inline constexpr char kSavedModelMainOpKey[] = "saved_model_main_op";
inline constexpr char kSavedModelLegacyInitOpKey[] = "legacy_init_op";
inline constexpr char kSavedModelInitOpSignatureKey[] = "__saved_model_init_op";
inline constexpr char kAssetFileDefTypeUrl[] = "type.googleapis.com/tensorflow.AssetFileDef";

// Tags.
inline constexpr char kSavedModelTagServe[] = "serve";
inline constexpr char kSavedModelTagTrain[] = "train";
inline constexpr char kSavedModelTagGpu[] = "gpu";

// Signatures.
inline constexpr char kDefaultServingSignatureDefKey[] = "serving_default";
inline constexpr char kPredictMethodName[] = "tensorflow/serving/predict";
inline constexpr char kClassifyMethodName[] = "tensorflow/serving/classify";
inline constexpr char kRegressMethodName[] = "tensorflow/serving/regress";

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_SAVED_MODEL_CONSTANTS_H_
