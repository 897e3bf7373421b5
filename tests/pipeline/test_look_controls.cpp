// The colourist's look controls (core/color/look_controls.h) where the result is
// composed, against analytic expectations computed here from CIELAB:
// - colour intensity 0 gives grey pixels (R = G = B) whatever the transfer, in
//   CIELAB, Oklab and linear RGB (which works in Oklab's chroma plane);
// - luminance intensity 0 keeps each pixel's CIELAB lightness (8-bit rounding);
// - protect neutrals 100 % keeps grey source pixels grey;
// - protect skin tones 100 % keeps a skin-hued pixel's hue within 1.5 degrees
//   while a blue pixel's hue still turns;
// - neutralize on a reference that is the source with a uniform cast: the grey
//   source pixels come out grey (they take the cast without it);
// - a control change re-composes only (plan and field from the caches);
// - out-of-range and NaN values are refused with the control's range.

#include <QtTest/QtTest>

#include <cmath>
#include <numbers>
#include <vector>

#include "core/color/color_map.h"
#include "core/color/look_controls.h"
#include "core/pipeline/recolor_pipeline.h"
#include "tests/support/lab_pixels.h"
#include "tests/support/qt_checks.h"

using namespace uot;
using uot::test::labToSrgb8;

namespace {

void srgb8ToLab(const std::uint8_t* in, double lab[3])
{
    double rgb[3], xyz[3];
    for (int k = 0; k < 3; ++k) rgb[k] = srgbToLinear(in[k] / 255.0);
    linearRgbToXyz(rgb, xyz);
    xyzToLab(xyz, lab);
}

double hueDegrees(const double lab[3]) { return std::atan2(lab[2], lab[1]) * 180.0 / std::numbers::pi; }

double hueDifference(double a, double b)
{
    double d = std::fmod(std::abs(a - b), 360.0);
    return d > 180 ? 360 - d : d;
}

// One row of the given CIELAB colours (8-bit sRGB) and their working-space (Lab) values as read back.
struct Strip {
    Image image;
    std::vector<float> colors;
};
Strip strip(const std::vector<std::array<double, 3>>& labs)
{
    Strip s;
    s.image = Image::allocate(static_cast<int>(labs.size()), 1, 3, 8);
    for (std::size_t i = 0; i < labs.size(); ++i) labToSrgb8(labs[i].data(), s.image.samples8() + 3 * i);
    s.colors.resize(3 * labs.size());
    imageToSpace(s.image, WorkingSpace::Lab, s.colors.data(), 1);
    return s;
}

// composeResult of the strip with one displacement for every pixel, under `controls`.
Image composeWith(const Strip& s, const float d[3], const LookControls& controls, const Palette* reference = nullptr)
{
    std::vector<float> displacement;
    for (std::size_t i = 0; i < s.image.pixelCount(); ++i) displacement.insert(displacement.end(), d, d + 3);
    MappingSettings ms;
    ms.look = controls;
    const LookAdjustment look = prepareLookAdjustment(controls, WorkingSpace::Lab, reference);
    Image out = Image::allocate(s.image.width, s.image.height, 3, 8);
    composeResult(s.colors.data(), displacement.data(), WorkingSpace::Lab, ms, s.image, out, 1, &look);
    return out;
}

std::vector<std::array<double, 3>> mixedColors()
{
    std::vector<std::array<double, 3>> labs;
    for (double L = 20; L <= 90; L += 10) labs.push_back({L, 0, 0});              // greys
    for (double L = 30; L <= 80; L += 10) labs.push_back({L, 30, -20});           // purples
    for (double L = 40; L <= 80; L += 10) labs.push_back({L, -25, 20});           // greens
    for (double L = 50; L <= 80; L += 10) labs.push_back({L, 16, 24});            // skin tones
    return labs;
}

}  // namespace

class TestLookControls : public QObject {
    Q_OBJECT
private slots:
    void colourIntensityZeroGivesGrey()
    {
        const Strip s = strip(mixedColors());
        const float d[3] = {5, 20, -15};
        LookControls c;
        c.colorIntensity = 0;
        const Image out = composeWith(s, d, c);
        const Image plain = composeWith(s, d, LookControls{});
        int coloured = 0;
        for (std::size_t p = 0; p < out.pixelCount(); ++p) {
            const std::uint8_t* o = out.samples8() + 3 * p;
            const int spread = std::max({o[0], o[1], o[2]}) - std::min({o[0], o[1], o[2]});
            UOT_QVERIFY_MSG(spread <= 1, "pixel " << p << " spread " << spread);
            const std::uint8_t* q = plain.samples8() + 3 * p;
            coloured += std::max({q[0], q[1], q[2]}) - std::min({q[0], q[1], q[2]}) > 10;
        }
        QVERIFY(coloured > int(out.pixelCount()) / 2);  // the transfer alone is colourful
    }

    void colourIntensityZeroGivesGreyInEveryWorkingSpace()
    {
        // Linear RGB works in Oklab's chroma plane; Oklab in its own.
        const Strip s = strip(mixedColors());
        for (WorkingSpace space : {WorkingSpace::Oklab, WorkingSpace::LinearRgb}) {
            std::vector<float> colors(3 * s.image.pixelCount()), displacement(colors.size());
            imageToSpace(s.image, space, colors.data(), 1);
            for (std::size_t i = 0; i < s.image.pixelCount(); ++i) {  // a tint: toward blue, slightly darker
                displacement[3 * i] = space == WorkingSpace::LinearRgb ? -0.05f : -0.03f;
                displacement[3 * i + 1] = space == WorkingSpace::LinearRgb ? -0.02f : -0.04f;
                displacement[3 * i + 2] = space == WorkingSpace::LinearRgb ? 0.15f : -0.06f;
            }
            MappingSettings ms;
            ms.look.colorIntensity = 0;
            const LookAdjustment look = prepareLookAdjustment(ms.look, space, nullptr);
            Image out = Image::allocate(s.image.width, 1, 3, 8);
            composeResult(colors.data(), displacement.data(), space, ms, s.image, out, 1, &look);
            for (std::size_t p = 0; p < out.pixelCount(); ++p) {
                const std::uint8_t* o = out.samples8() + 3 * p;
                const int spread = std::max({o[0], o[1], o[2]}) - std::min({o[0], o[1], o[2]});
                UOT_QVERIFY_MSG(spread <= 1, toString(space) << " pixel " << p << " spread " << spread);
            }
        }
    }

    void luminanceZeroKeepsSourceLightness()
    {
        const Strip s = strip(mixedColors());
        const float d[3] = {18, 10, -10};
        LookControls c;
        c.luminance = 0;
        const Image out = composeWith(s, d, c);
        const Image plain = composeWith(s, d, LookControls{});
        for (std::size_t p = 0; p < out.pixelCount(); ++p) {
            double src[3], res[3], pl[3];
            srgb8ToLab(s.image.samples8() + 3 * p, src);
            srgb8ToLab(out.samples8() + 3 * p, res);
            srgb8ToLab(plain.samples8() + 3 * p, pl);
            UOT_QCOMPARE_CLOSE(res[0], src[0], 0.6);  // 8-bit rounding
            QVERIFY(std::abs(pl[0] - src[0]) > 5);     // without the control the lightness moves
        }
    }

    void protectNeutralsKeepsGreysGrey()
    {
        const Strip s = strip(mixedColors());
        const float d[3] = {0, 25, 20};
        LookControls c;
        c.protectNeutrals = 1;
        const Image out = composeWith(s, d, c);
        for (std::size_t p = 0; p < 8; ++p) {  // the greys
            double res[3];
            srgb8ToLab(out.samples8() + 3 * p, res);
            UOT_QVERIFY_MSG(std::hypot(res[1], res[2]) < 1.0, "grey " << p << " chroma " << std::hypot(res[1], res[2]));
        }
        double purple[3];
        srgb8ToLab(out.samples8() + 3 * 9, purple);
        double purpleSrc[3];
        srgb8ToLab(s.image.samples8() + 3 * 9, purpleSrc);
        QVERIFY(std::hypot(purple[1] - purpleSrc[1], purple[2] - purpleSrc[2]) > 20);  // colours still move
    }

    void protectSkinKeepsSkinHue()
    {
        const Strip s = strip(mixedColors());
        const float d[3] = {0, -30, 10};  // turns the hue toward green
        LookControls c;
        c.protectSkin = 1;
        const Image out = composeWith(s, d, c);
        const Image plain = composeWith(s, d, LookControls{});
        for (std::size_t p = 19; p < 23; ++p) {  // the skin tones
            double src[3], res[3], pl[3];
            srgb8ToLab(s.image.samples8() + 3 * p, src);
            srgb8ToLab(out.samples8() + 3 * p, res);
            srgb8ToLab(plain.samples8() + 3 * p, pl);
            UOT_QVERIFY_MSG(hueDifference(hueDegrees(res), hueDegrees(src)) < 1.5,
                            "skin " << p << " hue " << hueDegrees(res) << " source " << hueDegrees(src));
            QVERIFY(hueDifference(hueDegrees(pl), hueDegrees(src)) > 30);  // unprotected it turns
        }
        for (std::size_t p = 8; p < 14; ++p) {  // purples (not skin) still turn
            double src[3], res[3];
            srgb8ToLab(s.image.samples8() + 3 * p, src);
            srgb8ToLab(out.samples8() + 3 * p, res);
            QVERIFY(hueDifference(hueDegrees(res), hueDegrees(src)) > 20);
        }
    }

    void neutralizeRemovesUniformCast()
    {
        // The source: greys and colours whose mean chroma is neutral; the reference:
        // the same with a uniform cast.
        const double cast[2] = {10, 14};
        std::vector<std::array<double, 3>> labs, castLabs;
        for (double L = 30; L <= 80; L += 10) labs.push_back({L, 0, 0});
        for (double L = 40; L <= 70; L += 10)
            for (const auto& ab : {std::array<double, 2>{25, -15}, {-25, 15}, {15, 25}, {-15, -25}}) labs.push_back({L, ab[0], ab[1]});
        for (const auto& c : labs) castLabs.push_back({c[0], c[1] + cast[0], c[2] + cast[1]});
        const Strip src = strip(labs), ref = strip(castLabs);
        auto tile = [](const Image& row) {  // a 8-row image of the strip, so the palettes have mass
            Image img = Image::allocate(row.width, 8, 3, 8);
            for (int y = 0; y < 8; ++y)
                std::copy(row.samples8(), row.samples8() + 3 * row.width, img.samples8() + 3 * y * row.width);
            return img;
        };
        RecolorSettings settings;
        RecolorPipeline pipeline(settings);
        pipeline.setSource(tile(src.image));
        pipeline.setReference(tile(ref.image));
        const Image plain = pipeline.render();
        settings.mapping.look.neutralize = true;
        pipeline.setSettings(settings);
        const Image neutral = pipeline.render();
        QVERIFY(pipeline.stats().planFromCache);
        QVERIFY(pipeline.stats().fieldFromCache);
        for (int x = 0; x < 6; ++x) {  // the greys, middle row
            const std::size_t p = static_cast<std::size_t>(4 * src.image.width + x);
            double a[3], b[3];
            srgb8ToLab(plain.samples8() + 3 * p, a);
            srgb8ToLab(neutral.samples8() + 3 * p, b);
            UOT_QVERIFY_MSG(std::hypot(a[1], a[2]) > 8, "grey " << x << " took no cast: " << a[1] << ", " << a[2]);
            UOT_QVERIFY_MSG(std::hypot(b[1], b[2]) < 3, "grey " << x << " not neutral: " << b[1] << ", " << b[2]);
        }
    }

    void controlChangeReusesPlanAndField()
    {
        const Strip s = strip(mixedColors());
        RecolorSettings settings;
        RecolorPipeline pipeline(settings);
        pipeline.setSource(s.image);
        std::vector<std::array<double, 3>> other;
        for (const auto& c : mixedColors()) other.push_back({c[0], -c[2], c[1]});
        pipeline.setReference(strip(other).image);
        const Image before = pipeline.render();
        settings.mapping.look.colorIntensity = 0.5;
        settings.mapping.look.protectSkin = 0.5;
        pipeline.setSettings(settings);
        const Image after = pipeline.render();
        QVERIFY(pipeline.stats().planFromCache);
        QVERIFY(pipeline.stats().fieldFromCache);
        QVERIFY(!std::equal(before.samples8(), before.samples8() + 3 * before.pixelCount(), after.samples8()));
        settings.mapping.look = LookControls{};  // back to the defaults: the same bytes as before
        pipeline.setSettings(settings);
        const Image again = pipeline.render();
        QVERIFY(std::equal(before.samples8(), before.samples8() + 3 * before.pixelCount(), again.samples8()));
    }

    void defaultsChangeNothing()
    {
        // At the defaults the composition is the transfer's, byte for byte: the same
        // as composing without any controls.
        const Strip s = strip(mixedColors());
        const float d[3] = {7, -12, 9};
        std::vector<float> displacement;
        for (std::size_t i = 0; i < s.image.pixelCount(); ++i) displacement.insert(displacement.end(), d, d + 3);
        Image a = Image::allocate(s.image.width, 1, 3, 8), b = Image::allocate(s.image.width, 1, 3, 8);
        composeResult(s.colors.data(), displacement.data(), WorkingSpace::Lab, MappingSettings{}, s.image, a, 1);
        const LookAdjustment look = prepareLookAdjustment(LookControls{}, WorkingSpace::Lab, nullptr);
        QVERIFY(!look.active);
        composeResult(s.colors.data(), displacement.data(), WorkingSpace::Lab, MappingSettings{}, s.image, b, 1, &look);
        QVERIFY(std::equal(a.samples8(), a.samples8() + 3 * a.pixelCount(), b.samples8()));
    }

    void refusesOutOfRange()
    {
        RecolorSettings s;
        s.mapping.look.luminance = std::nan("");
        UOT_QVERIFY_THROWS_WITH(validateSettings(s), "luminance intensity must be between 0 % and 200 %");
        s.mapping.look = {};
        s.mapping.look.colorIntensity = 2.5;
        UOT_QVERIFY_THROWS_WITH(validateSettings(s), "color intensity must be between 0 % and 200 %");
        s.mapping.look = {};
        s.mapping.look.protectSkin = -0.1;
        UOT_QVERIFY_THROWS_WITH(validateSettings(s), "protect skin tones must be between 0 % and 100 %");
        s.mapping.look = {};
        s.mapping.look.protectNeutrals = 1.5;
        UOT_QVERIFY_THROWS_WITH(validateSettings(s), "protect neutrals must be between 0 % and 100 %");
    }
};

QTEST_APPLESS_MAIN(TestLookControls)
#include "test_look_controls.moc"
