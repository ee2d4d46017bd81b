// Subcommand `attend`: attention maps of a sentence (or a padded batch) over its
// encoded word vectors, with the projections saved for other tools to check.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "posvec/attention.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/phrases.hpp"
#include "posvec/positional.hpp"
#include "posvec/report.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/word_lookup.hpp"
#include "rope_options.hpp"

namespace posvec::cli {
namespace {

namespace fs = std::filesystem;

struct AttendOptions {
  std::string vectors;
  LoadOptions load;
  std::vector<std::string> sentences;
  std::string input;
  AttentionOptions attention;  // its table's rows are flags (kAttentionSettings)
  std::string phrases;         // --phrases TABLE
  std::string encoding = "interleaved";
  double base = PositionalOptions{}.base;
  std::int64_t paddingIdx = PositionalOptions{}.paddingIdx;
  std::int64_t start = 0;
  std::string scale = "sqrt";
  std::string unk = "error";
  bool keepCase = false;
  bool noPunctuation = false;
  std::string format = "auto";
  bool json = false;  // --json: the same as --format json
  std::string output = "-";
  bool outputValues = false;
  std::string saveProjections;
  RopeCliOptions rope;
  CLI::Option* baseOption = nullptr;
};

enum class OutFormat { Tsv, Json, Npy, Svg, Html };

OutFormat resolveFormat(const std::string& name, const std::string& output) {
  auto endsWith = [&](const std::string& ext) {
    return output.size() >= ext.size() &&
           output.compare(output.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (name == "tsv") return OutFormat::Tsv;
  if (name == "json") return OutFormat::Json;
  if (name == "npy") return OutFormat::Npy;
  if (name == "svg") return OutFormat::Svg;
  if (name == "html") return OutFormat::Html;
  if (name == "auto")
    return endsWith(".npy")    ? OutFormat::Npy
           : endsWith(".json") ? OutFormat::Json
           : endsWith(".svg")  ? OutFormat::Svg
           : endsWith(".html") ? OutFormat::Html
                               : OutFormat::Tsv;
  throw ConfigError("unknown --format '" + name + "' (choose auto, tsv, json, npy, svg or html)");
}

struct Item {
  LookedUp words;
  MatrixD input;  // padded to the batch's longest sentence
  AttentionResult result;
};

std::vector<std::string> readTexts(const AttendOptions& o) {
  std::vector<std::string> texts = cli::sentencesOf(o.sentences, o.input);
  if (texts.empty())
    throw ConfigError(
        "nothing to attend over: give --sentence TEXT or --input FILE (one sentence a line)");
  return texts;
}

std::string fixed6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

// Text block per sentence and head: key tokens across, one query a line.
std::string tsvText(const std::vector<Item>& items, bool values) {
  std::string out;
  for (std::size_t s = 0; s < items.size(); ++s) {
    const auto& tok = items[s].words.tokens;
    const std::size_t n = tok.size();
    for (std::size_t h = 0; h < items[s].result.weights.size(); ++h) {
      if (!out.empty()) out += '\n';
      out += "# sentence " + std::to_string(s + 1) + ", head " + std::to_string(h + 1) +
             ": row = query, column = key\n";
      for (const std::string& t : tok) out += '\t' + t;
      out += '\n';
      const MatrixD& w = items[s].result.weights[h];
      for (std::size_t i = 0; i < n; ++i) {
        out += tok[i];
        for (std::size_t j = 0; j < n; ++j)
          out += '\t' + fixed6(w(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
        out += '\n';
      }
    }
    if (values) {
      out += "\n# sentence " + std::to_string(s + 1) + ": outputs, one row per token\n";
      const MatrixD& y = items[s].result.output;
      for (std::size_t i = 0; i < n; ++i) {
        out += tok[i];
        for (Eigen::Index c = 0; c < y.cols(); ++c)
          out += '\t' + fixed6(y(static_cast<Eigen::Index>(i), c));
        out += '\n';
      }
    }
  }
  return out;
}

nlohmann::json rowsJson(const MatrixD& m, Eigen::Index rows, Eigen::Index cols) {
  nlohmann::json a = nlohmann::json::array();
  for (Eigen::Index r = 0; r < rows; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index c = 0; c < cols; ++c) row.push_back(m(r, c));
    a.push_back(std::move(row));
  }
  return a;
}

nlohmann::json settingsJson(const AttendOptions& o, const Attention& att, double factor) {
  const AttentionOptions& a = att.options();
  return {{"d_model", att.dModel()},
          {"heads", a.heads},
          {"head_dim", att.headDim()},
          {"projection", projectionName(a.projection)},
          {"seed", a.seed},
          {"output_projection", !att.projections().output.identity()},
          {"causal", a.causal},
          {"mask_after_softmax", a.maskAfterSoftmax},
          {"renormalize", a.renormalize},
          {"positional", positionModeName(a.positional)},
          {"encoding", o.encoding},
          {"base", a.rope ? a.rope->base : o.base},  // rotary: the configuration's rope_theta
          {"start", o.start},
          {"embedding_scale", factor},
          {"score_scale", 1.0 / std::sqrt(static_cast<double>(att.headDim()))},
          {"unk", o.unk}};
}

void addPositionSettings(nlohmann::json& j, const Attention& att) {
  const AttentionOptions& a = att.options();
  if (a.rope) {
    const RopeFrequencies f = ropeFrequencies(*a.rope);
    j["rope_type"] = ropeTypeName(f.type);
    j["rotary_dim"] = f.dim;
    j["inv_freq"] = f.invFreq;
    j["attention_factor"] = f.attentionFactor;
  }
  if (a.positional == PositionMode::Alibi) j["alibi_slopes"] = alibiSlopes(a.heads);
}

std::string jsonText(const AttendOptions& o, const Attention& att, double factor,
                     const std::vector<Item>& items, bool values) {
  nlohmann::json j = settingsJson(o, att, factor);
  addPositionSettings(j, att);
  nlohmann::json seqs = nlohmann::json::array();
  for (const Item& it : items) {
    const auto n = static_cast<Eigen::Index>(it.words.tokens.size());
    nlohmann::json s = {{"tokens", it.words.tokens}, {"length", n}, {"unknown", it.words.unknown}};
    nlohmann::json heads = nlohmann::json::array();
    for (const MatrixD& w : it.result.weights) heads.push_back(rowsJson(w, n, n));
    s["weights"] = std::move(heads);
    if (values) s["outputs"] = rowsJson(it.result.output, n, it.result.output.cols());
    seqs.push_back(std::move(s));
  }
  j["sequences"] = std::move(seqs);
  return j.dump(1) + "\n";
}

// The maps as the study report draws them: one SVG for one sentence and head,
// else an HTML page with one SVG per sentence and head.
std::string figureText(const AttendOptions& o, const std::vector<Item>& items, OutFormat fmt) {
  std::vector<AttentionMapView> maps;
  std::string setting = o.attention.causal ? ", causal" : "";
  if (o.attention.maskAfterSoftmax) setting += ", masked after the softmax";
  for (std::size_t s = 0; s < items.size(); ++s) {
    const auto n = static_cast<Eigen::Index>(items[s].words.tokens.size());
    const auto& weights = items[s].result.weights;
    for (std::size_t h = 0; h < weights.size(); ++h) {
      std::string title = "Attention weights";
      if (items.size() > 1) title += ", sentence " + std::to_string(s + 1);
      if (weights.size() > 1)
        title += ", head " + std::to_string(h + 1) + " of " + std::to_string(weights.size());
      maps.push_back({title + " (" + positionModeName(o.attention.positional) + setting + ")",
                      items[s].words.tokens, weights[h].topLeftCorner(n, n)});
    }
  }
  if (fmt == OutFormat::Svg) {
    if (maps.size() > 1)
      throw ConfigError("--format svg draws one map; these are " + std::to_string(maps.size()) +
                        " (sentences x heads): use --format html for one page with all of them");
    return attentionMapSvg(maps[0].tokens, maps[0].weights, maps[0].title);
  }
  return attentionMapsHtml("Attention maps", maps);
}

// Where --output-values puts the outputs beside npy maps: FILE.npy -> FILE.values.npy.
std::string valuesPath(std::string output) {
  if (output.size() > 4 && output.compare(output.size() - 4, 4, ".npy") == 0)
    output.resize(output.size() - 4);
  return output + ".values.npy";
}

// One sentence: shape (rows, cols); a batch: (batch, rows, cols), padded.
void writeStacked(std::ostream& out, const std::vector<const MatrixD*>& mats,
                  std::vector<std::size_t> shape) {
  std::vector<double> all;
  for (const MatrixD* m : mats) all.insert(all.end(), m->data(), m->data() + m->size());
  writeNpyArray(out, all.data(), shape);
}

void writeNpyOutputs(const AttendOptions& o, const Attention& att, const std::vector<Item>& items) {
  const std::size_t B = items.size(), H = att.options().heads;
  const auto L = static_cast<std::size_t>(items[0].input.rows());
  std::vector<const MatrixD*> maps;
  for (const Item& it : items)
    for (const MatrixD& w : it.result.weights) maps.push_back(&w);
  std::vector<std::size_t> shape = {H, L, L};
  if (B > 1) shape.insert(shape.begin(), B);
  writeToPathOrStdout(o.output, [&](std::ostream& out) { writeStacked(out, maps, shape); });
  if (!o.outputValues) return;
  std::vector<const MatrixD*> outs;
  for (const Item& it : items) outs.push_back(&it.result.output);
  std::vector<std::size_t> vshape = {L, static_cast<std::size_t>(items[0].result.output.cols())};
  if (B > 1) vshape.insert(vshape.begin(), B);
  writeFileAtomically(valuesPath(o.output),
                      [&](std::ostream& out) { writeStacked(out, outs, vshape); });
}

// nn.Linear weights in float64 .npy, the inputs, and a config.json saying how
// to recompute the maps from them.
void saveProjections(const AttendOptions& o, const Attention& att, double factor,
                     const std::vector<Item>& items) {
  const fs::path dir(o.saveProjections);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw IoError("cannot create the directory '" + o.saveProjections + "' for --save-projections");
  const std::size_t d = att.dModel(), H = att.options().heads, dk = att.headDim();
  auto save = [&](const std::string& name, const double* data, std::vector<std::size_t> shape) {
    writeFileAtomically((dir / name).string(),
                        [&](std::ostream& out) { writeNpyArray(out, data, shape); });
  };
  auto saveLinear = [&](const std::string& name, const LinearMap& m) {
    LinearMap full = m;
    if (m.identity()) {  // the column selection each head makes, written out
      full.weight = MatrixD::Zero(static_cast<Eigen::Index>(H * dk), static_cast<Eigen::Index>(d));
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t c = 0; c < dk; ++c)
          full.weight(static_cast<Eigen::Index>(h * dk + c),
                      static_cast<Eigen::Index>(H * dk == d ? h * dk + c : c)) = 1.0;
      full.bias = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(H * dk));
    }
    save(name + "_weight.npy", full.weight.data(),
         {static_cast<std::size_t>(full.weight.rows()),
          static_cast<std::size_t>(full.weight.cols())});
    save(name + "_bias.npy", full.bias.data(), {static_cast<std::size_t>(full.bias.size())});
  };
  const AttentionProjections& p = att.projections();
  saveLinear("query", p.query);
  saveLinear("key", p.key);
  saveLinear("value", p.value);
  if (!p.output.identity()) saveLinear("output", p.output);
  std::vector<const MatrixD*> inputs;
  for (const Item& it : items) inputs.push_back(&it.input);
  const auto L = static_cast<std::size_t>(items[0].input.rows());
  std::vector<std::size_t> shape = {L, d};
  if (items.size() > 1) shape.insert(shape.begin(), items.size());
  writeFileAtomically((dir / "input.npy").string(),
                      [&](std::ostream& out) { writeStacked(out, inputs, shape); });
  nlohmann::json j = settingsJson(o, att, factor);
  addPositionSettings(j, att);
  j["recipe"] =
      "X = input.npy (rows already scaled and, for additive, position-encoded); for each of "
      "query/key/value: Y = X @ weight.T + bias; head h uses columns h*head_dim:(h+1)*head_dim; "
      "weights = softmax(Q_h K_h^T * score_scale) over allowed keys (causal: key <= query; "
      "padding: key < length); outputs = concat_h(weights_h V_h) @ output_weight.T + output_bias "
      "when output_weight.npy exists; rotary rotates Q_h and K_h first (with inv_freq: pairs of "
      "the first rotary_dim columns, cos and sin times attention_factor); alibi adds "
      "-alibi_slopes[h]*|i-j| to the scaled scores";
  nlohmann::json lengths = nlohmann::json::array(), tokens = nlohmann::json::array();
  for (const Item& it : items) {
    lengths.push_back(it.words.tokens.size());
    tokens.push_back(it.words.tokens);
  }
  j["lengths"] = lengths;
  j["tokens"] = tokens;
  writeOutput((dir / "config.json").string(), j.dump(1) + "\n");
}

void runAttend(const AttendOptions& o) {
  // Cheap checks first, before a large vectors file is read.
  AttentionOptions ao = o.attention;
  checkSettings(kAttentionSettings, ao);
  const Encoding encoding = parseEncoding(o.encoding);
  ao.rotaryEncoding = encoding;
  ao.rotaryBase = o.base;
  bool anyRope = false;
  RopeConfig rope = resolveRopeConfig(o.rope, &anyRope);
  if (anyRope && ao.positional != PositionMode::Rotary)
    throw ConfigError(
        "--rope-config and the rotary configuration options need --positional rotary");
  if (anyRope && (o.rope.config.empty() || o.baseOption->count() > 0)) rope.base = o.base;
  const Scale scale = Scale::parse(o.scale);
  const UnknownWords unk = parseUnknownWords(o.unk);
  const OutFormat fmt = resolveFormat(o.json ? "json" : o.format, o.output);
  if (fmt == OutFormat::Npy && o.outputValues && (o.output.empty() || o.output == "-"))
    throw ConfigError(
        "--format npy with --output-values writes two files: give -o FILE.npy "
        "(the outputs go to FILE.values.npy)");
  if ((fmt == OutFormat::Svg || fmt == OutFormat::Html) && o.outputValues)
    throw ConfigError("--output-values: svg and html draw the maps only; use tsv, json or npy");
  if (o.start < 0)
    throw ConfigError("--start must be 0 or more (got " + std::to_string(o.start) + ")");
  // The atomic rename would replace the sentences or the vectors with the maps.
  refuseOutputOverInput(o.output, "output", {o.vectors, o.input});
  if (fmt == OutFormat::Npy && o.outputValues)
    refuseOutputOverInput(valuesPath(o.output), "values output", {o.vectors, o.input});
  const std::vector<std::string> texts = readTexts(o);

  const LookupVectors emb = loadLookupVectors(seekableInput(o.vectors), o.load);
  const std::size_t d = emb.vectors.dim();
  if (anyRope) {
    // The configuration's rule at this attention's head size.
    rope.headDim = ao.headDim == 0 && ao.heads > 0 ? d / ao.heads : ao.headDim;
    ao.rope = rope;
  }
  ao.validate(d);
  PositionalOptions po;
  po.dim = d;
  po.base = o.base;
  po.encoding = encoding;
  po.paddingIdx = o.paddingIdx;
  if (ao.positional == PositionMode::Additive && d % 2 != 0)
    throw ConfigError("the vectors in '" + o.vectors + "' have " + std::to_string(d) +
                      " dimensions; additive position encoding needs an even d_model (use "
                      "--positional none or rotary with an even --head-dim)");
  if (ao.positional != PositionMode::Additive) po.dim = d + d % 2;  // unused beyond validation
  const PositionalEncoder encoder(po);

  TokenizerOptions to;
  to.lowercase = !o.keepCase;
  to.keepPunctuation = !o.noPunctuation;
  const Tokenizer tokenizer(to);
  const std::optional<Phrases> phrases =
      o.phrases.empty() ? std::nullopt : std::optional<Phrases>(readPhraseTable(o.phrases));
  std::vector<Item> items;
  std::vector<std::string> built;  // words built from character n-grams
  std::size_t longest = 0;
  for (std::size_t s = 0; s < texts.size(); ++s) {
    const Sentence tokens = cli::textTokens(tokenizer, texts[s], phrases ? &*phrases : nullptr);
    if (tokens.empty()) throw InputError("sentence " + std::to_string(s + 1) + " has no tokens");
    Item it;
    try {
      it.words = lookUpTokens(emb, tokens, unk);
    } catch (const InputError& e) {
      throw InputError("sentence " + std::to_string(s + 1) + ": " + cli::spelledMessage(e));
    }
    longest = std::max(longest, tokens.size());
    for (std::size_t t : it.words.built) addBuiltWord(built, it.words.tokens[t]);
    items.push_back(std::move(it));
  }
  noteBuiltWords(built);
  const Attention attention(d, ao);
  // Every map is kept until the output is written, as text (about 10 bytes a
  // weight) or as npy (8): refused here, before the first map is computed.
  attention.checkMemory(longest, items.size(), fmt == OutFormat::Npy ? 8.0 : 10.0);
  for (Item& it : items) {
    const MatrixD x = attentionInput(it.words.rows, ao.positional, encoder, o.start, scale);
    it.input = MatrixD::Zero(static_cast<Eigen::Index>(longest), static_cast<Eigen::Index>(d));
    it.input.topRows(x.rows()) = x;
    it.result = attention.compute(it.input, o.start, static_cast<std::size_t>(x.rows()));
  }
  const double factor = scale.factor(d);
  if (!o.saveProjections.empty()) saveProjections(o, attention, factor, items);
  switch (fmt) {
    case OutFormat::Tsv:
      writeOutput(o.output, tsvText(items, o.outputValues));
      break;
    case OutFormat::Json:
      writeOutput(o.output, jsonText(o, attention, factor, items, o.outputValues));
      break;
    case OutFormat::Npy:
      writeNpyOutputs(o, attention, items);
      break;
    case OutFormat::Svg:
    case OutFormat::Html:
      writeOutput(o.output, figureText(o, items, fmt));
      break;
  }
}

Registrar regAttend(42, [](CLI::App& app) {
  auto o = std::make_shared<AttendOptions>();
  auto* sub = app.add_subcommand(
      "attend", "Attention maps (heads x T x T) of a sentence over its encoded word vectors");
  sub->add_option("vectors", o->vectors, kVectorsHelp)
      ->required();
  addVectorLoadOptions(sub, o->load);
  sub->add_option("-s,--sentence", o->sentences,
                  "Text (tokenized like the corpus); repeat for a batch, padded to the longest")
      ->allow_extra_args(false);
  sub->add_option("-i,--input", o->input, "File with one sentence a line (a batch)");
  cli::addPhrasesOption(sub, o->phrases);
  addSettings(sub, kAttentionSettings, o->attention, {"rotaryBase", "rotaryEncoding"});
  sub->add_option("--encoding", o->encoding,
                  "interleaved, concatenated, book, tutorial, timescale or fairseq (see posvec pe "
                  "--help); for rotary, the pair layout and frequencies")
      ->capture_default_str();
  o->baseOption =
      sub->add_option("--base", o->base, "Frequency base (rope_theta)")->capture_default_str();
  sub->add_option(
         "--rope-config", o->rope.config,
         "Rotary: a model's config.json whose rope_scaling rule (and rope_theta, unless --base "
         "is given) the heads use, at their own head size")
      ->group("Rotary configuration (override the config.json's values)");
  addRopeOptions(sub, o->rope, "", false);
  sub->add_option("--padding-idx", o->paddingIdx,
                  "fairseq encoding: the zero row; tokens start at position padding-idx + 1")
      ->capture_default_str();
  sub->add_option("--start", o->start, "Position of the first token")->capture_default_str();
  sub->add_option("--scale", o->scale, "Embedding scale: sqrt (sqrt(d_model)), none, or a number")
      ->capture_default_str();
  sub->add_option("--unk", o->unk,
                  "Unknown words: error, zero (zero vector) or token (the mean vector, shown as "
                  "<unk>); a fastText .bin builds them from character n-grams instead")
      ->capture_default_str();
  sub->add_flag("--keep-case", o->keepCase, "Do not lowercase the text before lookup");
  sub->add_flag("--no-punct", o->noPunctuation,
                "Drop punctuation tokens (for vectors trained without them)");
  // The spelling of earlier versions, kept working but not shown.
  sub->add_flag("--no-punctuation", o->noPunctuation)->group("");
  sub->add_option(
         "--format", o->format,
         "auto (from the -o extension: .npy, .json, .svg, .html, else tsv), tsv (6 decimals, "
         "words on both axes), json, npy (float64, heads x T x T; a batch: batch x heads x L x "
         "L), svg (a heatmap with the words on both axes, as the study report draws it; one "
         "sentence and head) or html (one page of such heatmaps, every sentence and head)")
      ->capture_default_str();
  sub->add_flag("--json", o->json, "Same as --format json");
  sub->add_option("-o,--output", o->output, "Output file ('-' is stdout)")->capture_default_str();
  sub->add_flag("--output-values", o->outputValues,
                "Also write the attention outputs (npy: to FILE.values.npy)");
  sub->add_option("--save-projections", o->saveProjections,
                  "Directory for the projections (nn.Linear layout, float64 .npy), the input rows "
                  "and config.json, so other tools can recompute the maps");
  sub->callback([o] { runAttend(*o); });
});

}  // namespace
}  // namespace posvec::cli
