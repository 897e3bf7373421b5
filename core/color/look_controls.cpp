#include "core/color/look_controls.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "core/color/palette.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

// Smooth step from 0 at e0 to 1 at e1 (e0 > e1 gives the falling edge).
double smoothStep(double e0, double e1, double x)
{
    double t = (x - e0) / (e1 - e0);
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    return t * t * (3 - 2 * t);
}

// A working-space colour in CIELAB.
void workingToLab(WorkingSpace space, const double w[3], double lab[3])
{
    if (space == WorkingSpace::Lab) {
        for (int k = 0; k < 3; ++k) lab[k] = w[k];
        return;
    }
    double rgb[3], xyz[3];
    spaceToLinearRgb(space, w, rgb);
    linearRgbToXyz(rgb, xyz);
    xyzToLab(xyz, lab);
}

// A working-space colour in lookSpace(space), and back.
void toLook(WorkingSpace space, const double w[3], double out[3])
{
    if (space == WorkingSpace::LinearRgb)
        linearRgbToOklab(w, out);
    else
        for (int k = 0; k < 3; ++k) out[k] = w[k];
}
void fromLook(WorkingSpace space, const double in[3], double w[3])
{
    if (space == WorkingSpace::LinearRgb)
        oklabToLinearRgb(in, w);
    else
        for (int k = 0; k < 3; ++k) w[k] = in[k];
}

std::string percent(double fraction)
{
    std::ostringstream s;
    s << fraction * 100;
    return s.str();
}

}  // namespace

bool LookControls::isDefault() const { return *this == LookControls{}; }

std::string lookControlProblem(const std::string& control, double value)
{
    double hi = 0;
    std::string name;
    if (control == "luminance") {
        hi = kMaxLookIntensity;
        name = "luminance intensity";
    } else if (control == "color-intensity") {
        hi = kMaxLookIntensity;
        name = "color intensity";
    } else if (control == "protect-skin") {
        hi = kMaxLookProtection;
        name = "protect skin tones";
    } else if (control == "protect-neutrals") {
        hi = kMaxLookProtection;
        name = "protect neutrals";
    } else {
        throw Error(ErrorCode::InvalidArgument, "unknown look control '" + control + "'");
    }
    if (value >= 0 && value <= hi) return {};
    return name + " must be between 0 % and " + percent(hi) + " %";
}

std::string lookControlsProblem(const LookControls& c)
{
    for (const auto& [name, value] : {std::pair<const char*, double>{"luminance", c.luminance},
                                      {"color-intensity", c.colorIntensity},
                                      {"protect-skin", c.protectSkin},
                                      {"protect-neutrals", c.protectNeutrals}}) {
        std::string problem = lookControlProblem(name, value);
        if (!problem.empty()) return problem;
    }
    return {};
}

WorkingSpace lookSpace(WorkingSpace space) { return space == WorkingSpace::LinearRgb ? WorkingSpace::Oklab : space; }

float skinToneWeight(const double lab[3])
{
    const double chroma = std::hypot(lab[1], lab[2]);
    if (chroma < 1e-9) return 0.0f;
    const double hue = std::atan2(lab[2], lab[1]) * 180.0 / std::numbers::pi;  // -180..180
    // Hue: full from 35 to 75 degrees, none below 25 or above 85.
    const double h = smoothStep(25.0, 35.0, hue) * smoothStep(85.0, 75.0, hue);
    // Chroma: full from 10 to 50, none below 6 or above 60.
    const double c = smoothStep(6.0, 10.0, chroma) * smoothStep(60.0, 50.0, chroma);
    return static_cast<float>(h * c);
}

float neutralWeight(const double lab[3])
{
    return static_cast<float>(smoothStep(16.0, 4.0, std::hypot(lab[1], lab[2])));
}

void referenceCast(const Palette& reference, double cast[2])
{
    const std::size_t n = reference.size();
    std::vector<double> ab(2 * n), labAb(2 * n);
    double mean[2] = {0, 0}, labMean[2] = {0, 0}, total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double* w = &reference.points[3 * i];
        double look[3], lab[3];
        toLook(reference.space, w, look);
        workingToLab(reference.space, w, lab);
        for (int k = 0; k < 2; ++k) {
            ab[2 * i + k] = look[1 + k];
            labAb[2 * i + k] = lab[1 + k];
            mean[k] += reference.weights[i] * look[1 + k];
            labMean[k] += reference.weights[i] * lab[1 + k];
        }
        total += reference.weights[i];
    }
    cast[0] = cast[1] = 0;
    if (!(total > 0)) return;
    for (int k = 0; k < 2; ++k) {
        mean[k] /= total;
        labMean[k] /= total;
    }
    // Refine toward the colours near the mean (a Gaussian of 15 CIELAB units):
    // a reference with a uniform cast keeps its mean; a few saturated colours
    // far from it weigh less.
    constexpr double kSigma = 15.0;
    for (int round = 0; round < 3; ++round) {
        double m[2] = {0, 0}, lm[2] = {0, 0}, sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double da = labAb[2 * i] - labMean[0], db = labAb[2 * i + 1] - labMean[1];
            const double w = reference.weights[i] * std::exp(-(da * da + db * db) / (2 * kSigma * kSigma));
            for (int k = 0; k < 2; ++k) {
                m[k] += w * ab[2 * i + k];
                lm[k] += w * labAb[2 * i + k];
            }
            sum += w;
        }
        if (!(sum > 1e-12 * total)) break;
        for (int k = 0; k < 2; ++k) {
            mean[k] = m[k] / sum;
            labMean[k] = lm[k] / sum;
        }
    }
    cast[0] = mean[0];
    cast[1] = mean[1];
}

LookAdjustment prepareLookAdjustment(const LookControls& controls, WorkingSpace space, const Palette* reference)
{
    const std::string problem = lookControlsProblem(controls);
    if (!problem.empty()) throw Error(ErrorCode::InvalidArgument, problem);
    LookAdjustment a;
    a.space = space;
    a.controls = controls;
    a.active = !controls.isDefault();
    if (controls.neutralize && reference && reference->size() > 0) {
        if (reference->space != space)
            throw Error(ErrorCode::InvalidArgument, "neutralize: the reference palette is in another working space");
        double cast[2];
        referenceCast(*reference, cast);
        a.cast[0] = static_cast<float>(cast[0]);
        a.cast[1] = static_cast<float>(cast[1]);
    }
    return a;
}

void LookAdjustment::apply(const float* c, float t[3]) const
{
    const double cw[3] = {c[0], c[1], c[2]}, tw[3] = {t[0], t[1], t[2]};
    double s[3], r[3];
    toLook(space, cw, s);
    toLook(space, tw, r);
    if (controls.neutralize) {
        r[1] -= cast[0];
        r[2] -= cast[1];
    }
    r[0] = s[0] + controls.luminance * (r[0] - s[0]);
    r[1] *= controls.colorIntensity;
    r[2] *= controls.colorIntensity;
    if (controls.protectNeutrals > 0 || controls.protectSkin > 0) {
        double lab[3];
        workingToLab(space, cw, lab);
        const double wn = controls.protectNeutrals * neutralWeight(lab);
        if (wn > 0) {
            r[1] += wn * (s[1] - r[1]);
            r[2] += wn * (s[2] - r[2]);
        }
        const double ws = controls.protectSkin * skinToneWeight(lab);
        const double chroma = std::hypot(r[1], r[2]);
        if (ws > 0 && chroma > 0 && std::hypot(s[1], s[2]) > 0) {
            const double hs = std::atan2(s[2], s[1]), hr = std::atan2(r[2], r[1]);
            double delta = std::remainder(hs - hr, 2 * std::numbers::pi);  // shortest turn, -pi..pi
            const double h = hr + ws * delta;
            r[1] = chroma * std::cos(h);
            r[2] = chroma * std::sin(h);
        }
    }
    double out[3];
    fromLook(space, r, out);
    for (int k = 0; k < 3; ++k) t[k] = static_cast<float>(out[k]);
}

}  // namespace uot
