#include "posvec/train_config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "posvec/error.hpp"
#include "posvec/model_state.hpp"

namespace posvec {

const char* weightTypeName(WeightType type) {
  switch (type) {
    case WeightType::Bf16: return "bf16";
    case WeightType::Fp16: return "fp16";
    case WeightType::Fp32: break;
  }
  return "fp32";
}

std::size_t weightTypeBytes(WeightType type) { return type == WeightType::Fp32 ? 4 : 2; }

void TrainConfig::validate() const {
  // The ranges of single settings are their rows'; what ties two settings is here.
  checkSettings(kTrainSettings, *this);
  auto refuse = [](const Setting& about, const std::string& rest) {
    throw ConfigError(ErrorText::about(about) << rest);
  };
  const auto setting = [](std::string_view name) { return settingNamed(kTrainSettings, name); };
  if (!(minAlpha >= 0) || minAlpha > alpha)
    refuse(setting("minAlpha"),
           " must be between 0 and the initial learning rate (" + settingNumberText(alpha, false) + "; got " +
               settingNumberText(minAlpha, false) + ")");
  if (subwords) {
    if (maxn > 0 && (minn < 1 || minn > maxn))
      refuse(setting("minn"), " must be between 1 and the longest (" +
                                              std::to_string(maxn) + "; got " +
                                              std::to_string(minn) + ")");
    if (loss == Loss::HierarchicalSoftmax)
      refuse(setting("subwords"),
             " uses negative sampling; hierarchical softmax with subwords is not available");
    if (!cbowMean && architecture == Architecture::Cbow)
      throw ConfigError(ErrorText::about(setting("cbowMean"),
                                         "summed CBOW trains word vectors only; subword CBOW "
                                         "averages its rows, as fastText does"));
  }
  // (Before the corpus is read; training under mpirun refuses them too, once it knows.)
  if (weights != WeightType::Fp32 &&
      (architecture != Architecture::SkipGram || loss != Loss::NegativeSampling ||
       (!subwords && kernel == Kernel::Classic)))
    throw ConfigError(
        std::string("weights stored in ") + weightTypeName(weights) +
        " train skip-gram with negative sampling (the batched or the subword kernel) only; use "
        "float32 weights (fp32) for CBOW, hierarchical softmax or the classic kernel");
}

int TrainConfig::blockNegativesFor() const {
  return blockNegatives > 0 ? blockNegatives : std::max(negative, (5 * combine + 3) / 4);
}

std::string TrainConfig::serialize() const { return settingsText(kTrainSettings, *this); }

TrainConfig TrainConfig::deserialize(const std::string& text) {
  TrainConfig c;
  // Configurations stored before context combining trained one window per block.
  c.combine = 1;
  std::istringstream in(text);
  std::string line;
  std::set<std::string> seen;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw FormatError("training config line " + std::to_string(lineNo) + " is not key=value: '" +
                        line + "'");
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    // How the corpus was read ("corpus.locale=tr"): the trainer's record, checked
    // when resuming, not a training option.
    if (key.rfind("corpus.", 0) == 0) continue;
    if (!seen.insert(key).second) throw FormatError("training config: '" + key + "' appears twice");
    const int read = readSettingByKey(kTrainSettings, key, value, c);
    if (read == 0)
      throw FormatError("training config: unknown key '" + key + "' (written by a newer posvec?)");
    if (read < 0)
      throw FormatError("training config: '" + key + "' has the invalid value '" + value + "'");
  }
  return c;
}

}  // namespace posvec
