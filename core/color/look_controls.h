#pragma once
// The colourist's controls on a look (as in a "match colour" dialog), applied
// per pixel where the result is composed, after the transfer and before the
// strength (fade), so that the screen, the saved image and an exported LUT
// (fitted to the rendered result) get the same look. None of them needs a new
// solve: the plan and the smoothed field are reused, as for a strength change.
//
// For a source colour c and its fully transferred colour t (strength 1), in the
// working space's lightness / chroma plane (Lab, Oklab; Oklab for linear RGB):
//   1. neutralize: t's chroma moves by minus the reference's colour cast
//      (referenceCast: the reference palette's mean chroma, weighted toward its
//      near-neutral colours);
//   2. luminance intensity k_L: L = L_c + k_L (L_t - L_c) (0 keeps the source's
//      lightness, 1 is the transfer's, 2 moves twice as far);
//   3. colour intensity k_C: the chroma (a, b) is scaled by k_C (0 = grey);
//   4. protect neutrals p_N: the chroma moves toward the source's by p_N w_N(c),
//      w_N = 1 for source chroma up to 4 CIELAB units, falling smoothly to 0 at 16;
//   5. protect skin tones p_S: the hue turns toward the source's by p_S w_S(c),
//      chroma kept, w_S the source's membership of the skin-tone region (CIELAB
//      hue 25..85 deg, chroma 6..60, with smooth edges; skinToneWeight).
// The defaults change nothing: the composition skips this step bit for bit.

#include <string>

#include "core/color/color_space.h"

namespace uot {

struct Palette;

struct LookControls {
    double luminance = 1.0;        // luminance intensity, 0..2 (shown as 0..200 %)
    double colorIntensity = 1.0;   // colour intensity, 0..2 (0..200 %)
    bool neutralize = false;       // remove the reference's overall colour cast
    double protectSkin = 0.0;      // 0..1 (0..100 %)
    double protectNeutrals = 0.0;  // 0..1 (0..100 %)

    // True when the controls leave the look as the transfer made it.
    bool isDefault() const;
    bool operator==(const LookControls& other) const = default;
};

// Limits of the controls (fractions; the user sees percent).
inline constexpr double kMaxLookIntensity = 2.0;
inline constexpr double kMaxLookProtection = 1.0;

// The message for a control value outside its range or not a number, empty
// when `value` is valid. `control`: "luminance", "color-intensity",
// "protect-skin" or "protect-neutrals". The CLI and the studio's settings
// reader both show this text.
std::string lookControlProblem(const std::string& control, double value);
// The first problem of a set of controls, empty when all are valid.
std::string lookControlsProblem(const LookControls& controls);

// The reference's colour cast in the chroma plane of lookSpace(space): the
// palette's weighted mean (a, b), refined a few times with weights that favour
// colours near that mean (so a few saturated colours do not pull it).
void referenceCast(const Palette& reference, double cast[2]);

// The space the controls work in: the working space, or Oklab for linear RGB.
WorkingSpace lookSpace(WorkingSpace space);

// Membership (0..1) of a CIELAB colour in the skin-tone region, and in the
// neutrals (low chroma), with the soft falloffs described above.
float skinToneWeight(const double lab[3]);
float neutralWeight(const double lab[3]);

// The controls prepared for one render (the cast computed once).
struct LookAdjustment {
    bool active = false;  // false: apply() is never called
    WorkingSpace space = WorkingSpace::Lab;
    LookControls controls;
    float cast[2] = {0, 0};  // in lookSpace(space)

    // t: the fully transferred colour of source colour c (working space), adjusted in place.
    void apply(const float* c, float t[3]) const;
    // The same on a displacement: e = the adjusted t minus c, for t = c + d.
    void applyToDisplacement(const float* c, const float* d, float e[3]) const
    {
        float t[3] = {c[0] + d[0], c[1] + d[1], c[2] + d[2]};
        apply(c, t);
        for (int k = 0; k < 3; ++k) e[k] = t[k] - c[k];
    }
};

// `reference` may be null when controls.neutralize is off.
LookAdjustment prepareLookAdjustment(const LookControls& controls, WorkingSpace space, const Palette* reference);

}  // namespace uot
