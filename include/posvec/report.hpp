/// \file
/// Report: the study's results as a text table, JSON, SVG figures and one
/// self-contained HTML page (inline SVG and CSS, no scripts, opens offline). It
/// draws and formats the numbers of a StudyResults (study_results.hpp) and
/// computes none of them. Every function is pure (writeReport() aside) and may be
/// called from any thread.
#pragma once

#include <string>
#include <vector>

#include "posvec/study_results.hpp"

namespace posvec {

/// One figure of the report.
struct Figure {
  std::string file;     ///< e.g. "distance-profile.svg"
  std::string title;    ///< the figure's heading
  std::string caption;  ///< one or two sentences: what to see
  std::string svg;      ///< a complete standalone SVG document
};

/// The figures of a study, in page order (the training figure only when
/// results.training is not empty). InputError when the results hold no pair.
std::vector<Figure> studyFigures(const StudyResults& results);

/// The study table as the CLI prints it (pairs × encodings, the line explaining
/// book vs interleaved, and the study's published values for comparison).
std::string studyTable(const StudyResults& results);

/// Compact JSON: word_similarity, positional_similarity, combined_similarity of the
/// first pair under the first encoding, every pair in "pairs", and the settings.
/// InputError when the results hold no pair.
std::string summaryJson(const StudyResults& results);
/// Every number of the results (the PE matrices as their defining parameters and
/// the plotted columns), as pretty-printed JSON.
std::string resultsJson(const StudyResults& results);

/// The report page: one self-contained HTML document with `figures` inline.
std::string reportHtml(const StudyResults& results, const std::vector<Figure>& figures);

/// One attention map as the study report draws it: a heatmap of the weights (0 to 1),
/// keys across, queries down, the tokens on both axes (weights is T x T, T =
/// tokens.size()). A standalone SVG document whose cells are vector rectangles.
std::string attentionMapSvg(const std::vector<std::string>& tokens, const MatrixD& weights,
                            const std::string& title);

/// One map of attentionMapsHtml().
struct AttentionMapView {
  std::string title;                ///< shown above the map
  std::vector<std::string> tokens;  ///< the words on both axes
  MatrixD weights;                  ///< tokens.size() x tokens.size()
};
/// Several maps (a batch of sentences, several heads) as one self-contained HTML page
/// of inline SVGs, each under its title.
std::string attentionMapsHtml(const std::string& pageTitle,
                              const std::vector<AttentionMapView>& maps);

/// Creates `dir` if needed and writes index.html, results.json and one SVG per
/// figure, each atomically. IoError when the directory cannot be created or a
/// file cannot be written.
void writeReport(const StudyResults& results, const std::string& dir);

}  // namespace posvec
