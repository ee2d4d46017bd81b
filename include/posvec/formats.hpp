/// \file
/// File formats for word vectors: word2vec binary and text (as word2vec.c and
/// gensim write and read them), .npy matrix + vocabulary, and posvec's own
/// versioned full-state model. Loaders detect the format from the content.
/// Every function may be called from any thread (different output paths for
/// concurrent saves).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/model_state.hpp"
#include "posvec/settings.hpp"
#include "posvec/types.hpp"

namespace posvec {

/// A file format for word vectors.
enum class VectorFormat {
  Auto,            ///< detect (loading) or from the extension (saving)
  Word2VecBinary,  ///< `"V D\n"` then `"word "` + D little-endian float32 (+ `"\n"`)
  Word2VecText,    ///< `"V D\n"` then `"word v1 v2 ... vD\n"`
  Npy,             ///< FILE.npy (float32 V x D, C order) + FILE.vocab ("word count" lines)
  Model            ///< posvec full-state model (.posvec)
};

/// `bin` / `text` / `npy` / `model` (also `auto`, `binary`, `txt`, `vec`, `posvec`);
/// throws ConfigError otherwise.
VectorFormat parseVectorFormat(const std::string& name);
/// The name parseVectorFormat() reads back: "auto", "bin", "text", "npy" or "model".
std::string formatName(VectorFormat format);
/// .bin -> binary, .txt/.vec -> text, .npy -> npy, .posvec -> model (any case);
/// ConfigError otherwise.
VectorFormat formatFromExtension(const std::string& path);
/// Looks at the content (magic bytes, header line); FormatError when it is none of
/// them, IoError when the file cannot be read. A fastText model (.bin) or a Python
/// pickle (a gensim .model/.kv) gets a FormatError that names it and says how to get
/// word2vec-format vectors out of it.
VectorFormat detectFormat(const std::string& path);

/// What a file that is not text is, from its first bytes: "a NumPy array (.npy)",
/// "a posvec model (.posvec)", "a fastText model (.bin)", "a Python pickle (a gensim
/// .model or .kv file)", "word vectors in word2vec's binary format", "a binary file"
/// (NUL bytes and invalid UTF-8 in its first 4 KiB), or "" for what may be text
/// (compressed files included: they are read through their decompression; pipes and
/// other files that are not regular are not read). For messages about text inputs
/// given a binary file.
std::string binaryFileKind(const std::string& path);

/// Saves atomically; "-" streams to standard output (bin and text; npy, two files,
/// is refused with ConfigError). Auto means formatFromExtension(path). Model
/// format needs a ModelState and is refused here (use saveModel).
/// \throws InputError for a word that is not valid UTF-8 or a value that is not
///         finite; IoError when the file cannot be written.
void saveVectors(const Embeddings& embeddings, const std::string& path,
                 VectorFormat format = VectorFormat::Auto);
/// What to do with a word that is not valid UTF-8 (gensim's `unicode_errors`,
/// Python's bytes.decode semantics).
enum class UnicodeErrors {
  Strict,   ///< FormatError naming the word (its bad bytes shown as `\xNN`) and where it is
  Replace,  ///< each maximal invalid subsequence becomes U+FFFD
  Ignore    ///< invalid bytes are dropped (a word left empty is an error)
};
/// `strict` / `replace` / `ignore`; ConfigError otherwise.
UnicodeErrors parseUnicodeErrors(const std::string& name);
/// The name parseUnicodeErrors() reads back.
std::string unicodeErrorsName(UnicodeErrors mode);

/// Options of loadVectors, with gensim's load_word2vec_format semantics.
struct LoadOptions {
  /// Words that are not valid UTF-8 (default: an error).
  UnicodeErrors unicodeErrors = UnicodeErrors::Strict;
  /// Read only the first `limit` records (0: all). Nothing after them is read or
  /// checked, so a large file loads in time proportional to `limit`.
  std::uint64_t limit = 0;
  /// word2vec text without the "V D" line (GloVe's files): every line is a record,
  /// the dimension is the first line's field count minus one. Text files only
  /// (ConfigError for an .npy file or a model).
  bool noHeader = false;
};

/// The names of UnicodeErrors in text (gensim's unicode_errors values).
inline constexpr Choice<UnicodeErrors> kUnicodeErrorsNames[] = {
    {UnicodeErrors::Strict, "strict"},
    {UnicodeErrors::Replace, "replace"},
    {UnicodeErrors::Ignore, "ignore"}};

/// The settings of LoadOptions, one row each (settings.hpp).
inline constexpr auto kLoadSettings = std::tuple{
    SettingRow<LoadOptions, UnicodeErrors>{
        .member = &LoadOptions::unicodeErrors, .setting = {"unicodeErrors", "unicode errors"},
        .spelled = {.flag = "--unicode-errors", .keyword = "unicode_errors",
                    .keywordInText = "unicode_errors="},
        .help = "Words in a word2vec file that are not valid UTF-8: strict (an error), replace "
                "(each bad sequence becomes U+FFFD) or ignore (bad bytes dropped), as gensim's "
                "unicode_errors",
        .choices = kUnicodeErrorsNames},
    SettingRow<LoadOptions, std::uint64_t>{
        .member = &LoadOptions::limit, .setting = {"limit", "the record limit"},
        .spelled = {.flag = "--limit", .keyword = "limit"},
        .help = "Read only the first N vectors of the file (0: all)"},
    SettingRow<LoadOptions, bool>{
        .member = &LoadOptions::noHeader, .setting = {"noHeader", "the no-header option"},
        .spelled = {.flag = "--no-header", .keyword = "no_header",
                    .keywordInText = "no_header=True"},
        .help = "The word2vec text file has no 'WORDS DIMENSION' first line (GloVe's files)"},
};

/// The arguments of the save functions that messages name: the format a file is
/// written in and the npy files' value type.
inline constexpr auto kSaveArguments = std::tuple{
    ArgumentRow{.setting = {"format", "the format option"}, .spelled = {.flag = "--format"}},
    ArgumentRow{.setting = {"npyDtype", "the npy dtype"},
                .spelled = {.flag = "--npy-dtype", .keyword = "dtype"}},
};

/// Loads any of the formats (a model file yields its input vectors). Throws
/// IoError / FormatError with the path and what is wrong (truncated, bad header...).
/// Like gensim: a repeated word keeps its first vector, data after the V-th
/// vector is ignored, text lines may end in spaces, binary vectors may or may
/// not be followed by `"\n"`. Words must be valid UTF-8 (see LoadOptions) and
/// values finite. `detected`, when given, receives the format that was read.
/// Lengths are checked against the file's size before anything is allocated.
Embeddings loadVectors(const std::string& path, const LoadOptions& options = {},
                       VectorFormat* detected = nullptr);

/// saveVectors() in the npy format with float16 values ('<f2', half the size, what
/// NumPy reads as float16): each value rounded to nearest even (below 2^-24: zero).
/// A value float16 cannot hold (beyond +-65504, or not finite) is an InputError,
/// before anything is written. loadVectors reads such files back (as float32).
void saveNpyFloat16(const Embeddings& embeddings, const std::string& path);
/// The vocabulary file that goes with an .npy matrix: "x.npy" -> "x.vocab"
/// (other names get ".vocab" appended).
std::string npyVocabularyPath(const std::string& npyPath);

/// Writes a float32 array in NumPy's .npy format 1.0 ('<f4', C order, `shape` in
/// row-major order, `data` holding their product of values) to `out`.
void writeNpyArray(std::ostream& out, const float* data, const std::vector<std::size_t>& shape);
/// writeNpyArray() for a float64 array ('<f8').
void writeNpyArray(std::ostream& out, const double* data, const std::vector<std::size_t>& shape);

/// Magic "POSVECM1" + version + little-endian fixed-width fields; saved atomically
/// ("-" streams to standard output).
/// \throws InputError when the state is inconsistent (word, count and row numbers
///         differ, output rows of another dimension); IoError when writing fails.
void saveModel(const ModelState& model, const std::string& path);
/// Reads a model saveModel() wrote: the full state, both matrices included.
/// \throws FormatError when the file is another vector format, another model
///         generation, or corrupt or truncated; IoError when it cannot be read.
ModelState loadModel(const std::string& path);

}  // namespace posvec
