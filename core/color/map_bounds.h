#pragma once
// Bounds on the colour map that make it unable to create the artifacts a colourist
// sees first (bands, inverted gradients, colour blotches and islands), by
// construction rather than by tuning. Applied by core/color/map_regularizer.h to
// the displacement lattice, to the residual match's per-channel map and to the
// guided-filter field (MappingSettings::bounds). Slopes are dimensionless
// (displacement units per colour unit, the same in every working space).
#include <limits>

namespace uot {

struct MapBounds {
    bool enabled = true;  // false: the unbounded map (what the pipeline did before the bounds)
    // Lightness (Lab / Oklab): the lattice's lightness output becomes one monotone curve
    // g(L) of the source lightness alone (a weighted isotonic regression of the
    // transport's lightness at the colours present), with minSlope <= g' <= maxSlope:
    // a brighter colour never comes out darker than a dimmer one, whatever their chroma.
    double lightnessMinSlope = 0.2;
    double lightnessMaxSlope = 3;
    // How far that curve moves toward the lightness transfer (core/color/lightness_transfer.h):
    // the 1-D optimal transport map of lightness from the source's distribution to the
    // reference's, fitted with the same slope bounds, kept only where the map's estimate
    // of its palette distance (the source palette through the bounded lattice, against the
    // reference palette) is smaller than with the transport's own curve. 0 = the transport's
    // curve alone, 1 = the transfer alone where kept. 1: on the tuning halves the palette
    // ratio to the best baseline goes 0.930 -> 0.924 (six samples) and 1.210 -> 1.128
    // (scikit-image) within every artifact and structure constraint (docs/BENCHMARKS.md,
    // "Issue 23, looks: the lightness transfer where the palette comes nearer").
    double lightnessTransfer = 1;
    // Chroma displacement (Lab / Oklab a, b; every channel in linear RGB): Lipschitz
    // bounds on the lattice, per axis: |d displacement / d chroma axis| <= chromaSlope,
    // |d displacement / d L| <= chromaLightnessSlope (colour edges where the source has
    // only lightness edges). The same bounds on the guided-filter field's
    // per-window colour models.
    // 1.25 and 0.5, with the field folded into the lattice (MappingSettings::lutFaithful) and
    // field deviations 0: chosen on the six samples' tuning half, palette ratio 0.907 to the
    // best baseline at worst blotch 2.88 % (1: 0.937; 2 and 1: 0.833 but blotch 11.95 %;
    // docs/BENCHMARKS.md, "Looks: the LUT is the look").
    double chromaSlope = 1.25;
    double chromaLightnessSlope = 0.5;
    // The chroma the map gives along lightness at one source chroma: over each lattice
    // column along L (the nodes next to the colours present; with the source image, only
    // between the lightness levels that meet, chromaRangeRadius), the output's a and b
    // after the gamut's compression lie within an interval of this width (Lab units, scaled by
    // the space's nominal range / 100). The blotch measure marks a colour edge where the
    // result's chroma gradient exceeds twice the source's + 3 units a pixel; across a sharp
    // lightness edge (no chroma step in the source) that is a chroma step of about 11 Lab
    // units, whatever the lightness step, so a slope along L alone cannot hold it (a black
    // to grey edge spans 60 L units), nor can the displacement's bound: the gamut leaves
    // near-black no chroma. Infinity: no bound. 16 (about that step along one axis, edges
    // being softer than a sharp step at the measure's scale), set from the measure, not
    // chosen by the palette objective, which it costs (six samples' tuning half 0.907 ->
    // 1.095); the scikit-image held-back half's worst blotch 9.43 % -> 2.14 %
    // (docs/BENCHMARKS.md, "Issue 23, looks: the chroma's range along lightness").
    double chromaLightnessRange = 16;
    // Where that range holds (with the source image; lightness_spans.h): between the
    // lightness levels that meet within this many pixels of the picture scaled to 128 px on
    // its long side (the measure's scale), chains of such meetings within as many ranges;
    // levels that never meet (a shadow and a highlight far apart) are free. Infinity: over
    // each whole column (as without an image).
    double chromaRangeRadius = 2;
    // The share of the scaled picture's pixels (per cent) on which the map may create a
    // colour edge along a lightness edge, the range's own included: a pixel counts where
    // its column's chroma step over its span, over the span's lightness, times its
    // lightness gradient exceeds the blotch measure's threshold there (with each axis's
    // step capped at the range where the range holds). What the range leaves counted is
    // paid first; the rest frees whole columns of the range, those that add the fewest
    // counted pixels for their weight first. 0: the range holds on every edge. 2, chosen on
    // the tuning halves (six samples' palette ratio 1.095 -> 0.930, scikit-image 1.282 ->
    // 1.210, within every artifact constraint; below the hard 3 % by the estimate's error;
    // docs/BENCHMARKS.md, "Issue 23, looks: the range where lightness levels meet").
    double chromaRangeExempt = 2;
    // The residual match's per-channel map f: minSlope <= f' <= maxSlope.
    double residualMinSlope = 0.5;
    double residualMaxSlope = 2;
    // The field's chroma displacement at each block may differ from the global map's
    // (the lattice plus the residual shift there) by at most this, in Lab units
    // (scaled by the space's nominal range / 100): the edge-aware field follows
    // edges but cannot paint an island the global map does not have. 0 by default: with
    // the field folded into the lattice the field's departures from the global map only
    // cost palette (tuning median ratio 0.937 at 0 against 1.017 at 6 / 2).
    double fieldDeviation = 0;
    // The same for the field's lightness displacement (Lab units): the result's lightness
    // stays within this of the monotone curve's.
    double fieldLightnessDeviation = 0;

    bool operator==(const MapBounds&) const = default;
};

}  // namespace uot
