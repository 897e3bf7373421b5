// Scopes (core/color/scopes.h) of tiny synthetic images against values worked
// out by hand from the Rec. 709 formulas.
#include <QtTest/QtTest>

#include <cstdint>
#include <numeric>
#include <vector>

#include "core/color/scopes.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

float total(const ScopePlot& p) { return std::accumulate(p.counts.begin(), p.counts.end(), 0.0f); }

}  // namespace

class TestScopes : public QObject {
    Q_OBJECT
private slots:
    void handWorkedTwoByTwo()
    {
        // Row 0: white, red; row 1: black, gray 128. Two columns, 256 levels.
        Image img = Image::allocate(2, 2, 3, 8);
        const std::uint8_t px[12] = {255, 255, 255, 255, 0, 0, 0, 0, 0, 128, 128, 128};
        std::copy(px, px + 12, img.data.begin());
        ScopeSettings s;
        s.columns = 2;
        const Scopes sc = computeScopes(img, s);
        QCOMPARE(sc.samples, std::size_t{4});
        QCOMPARE(sc.step, 1);
        // Waveform: column 0 holds white (Y' 1, row 0) and black (row 255); column 1
        // red (Y' 0.2126 -> level round(54.213) = 54, row 201) and gray (level 128, row 127).
        QCOMPARE(sc.waveform.at(0, 0), 1.0f);
        QCOMPARE(sc.waveform.at(0, 255), 1.0f);
        QCOMPARE(sc.waveform.at(1, 201), 1.0f);
        QCOMPARE(sc.waveform.at(1, 127), 1.0f);
        QCOMPARE(total(sc.waveform), 4.0f);
        // Parade: red channel of column 1 has red (255, row 0) and gray (row 127);
        // its green channel has 0 (row 255) and gray.
        QCOMPARE(sc.parade[0].at(1, 0), 1.0f);
        QCOMPARE(sc.parade[0].at(1, 127), 1.0f);
        QCOMPARE(sc.parade[1].at(1, 255), 1.0f);
        QCOMPARE(sc.parade[1].at(1, 127), 1.0f);
        QCOMPARE(sc.parade[2].at(0, 0), 1.0f);
        // Vectorscope: the neutrals at Cb = Cr = 0 -> x = round(127.5) = 128, y = 255 - 128 = 127;
        // red: Cb = -0.2126 / 1.8556 = -0.114572, x = round(0.385428 x 255) = 98;
        // Cr = 0.7874 / 1.5748 = 0.5, y = 255 - 255 = 0.
        QCOMPARE(sc.vectorscope.at(128, 127), 3.0f);
        QCOMPARE(sc.vectorscope.at(98, 0), 1.0f);
        QCOMPARE(total(sc.vectorscope), 4.0f);
    }

    void grayAndSixteenBit()
    {
        // A 16-bit gray ramp of 4 pixels in 4 columns and 3 levels: values 0, 1/3, 2/3, 1
        // fall on levels round(v x 2) = 0, 1, 1, 2 -> rows 2, 1, 1, 0.
        Image img = Image::allocate(4, 1, 1, 16);
        const std::uint16_t v[4] = {0, 21845, 43690, 65535};
        std::copy(v, v + 4, img.samples16());
        ScopeSettings s;
        s.columns = 4;
        s.levels = 3;
        s.vectorscopeSize = 3;
        const Scopes sc = computeScopes(img, s);
        QCOMPARE(sc.waveform.at(0, 2), 1.0f);
        QCOMPARE(sc.waveform.at(1, 1), 1.0f);
        QCOMPARE(sc.waveform.at(2, 1), 1.0f);
        QCOMPARE(sc.waveform.at(3, 0), 1.0f);
        for (int c = 0; c < 3; ++c) QCOMPARE(sc.parade[c].at(3, 0), 1.0f);
        QCOMPARE(sc.vectorscope.at(1, 1), 4.0f);  // gray: the centre
    }

    void subsamplesLargeImagesOnAGrid()
    {
        // 6x6 with a limit of 4 pixels: step ceil(sqrt(36 / 4)) = 3, pixels (0|3, 0|3).
        Image img = Image::allocate(6, 6, 3, 8);
        for (int y = 0; y < 6; ++y)
            for (int x = 0; x < 6; ++x)
                for (int c = 0; c < 3; ++c) img.data[3 * static_cast<std::size_t>(y * 6 + x) + c] = (x % 3 == 0 && y % 3 == 0) ? 255 : 0;
        ScopeSettings s;
        s.sampleLimit = 4;
        s.threads = 2;
        const Scopes sc = computeScopes(img, s);
        QCOMPARE(sc.step, 3);
        QCOMPARE(sc.samples, std::size_t{4});
        QCOMPARE(total(sc.waveform), 4.0f);
        // Only the white pixels were read: every sample is at the top row.
        float top = 0;
        for (int x = 0; x < s.columns; ++x) top += sc.waveform.at(x, 0);
        QCOMPARE(top, 4.0f);
    }

    void grayEightBitForDrawing()
    {
        ScopePlot p{2, 2, {0.0f, 1.0f, 4.0f, 2.0f}};
        const std::vector<std::uint8_t> g = scopeToGray8(p);
        QCOMPARE(int(g[0]), 0);
        QCOMPARE(int(g[1]), 128);  // 255 x sqrt(1/4) = 127.5
        QCOMPARE(int(g[2]), 255);
        QCOMPARE(int(g[3]), 180);  // 255 x sqrt(1/2) = 180.3
        Image bad = Image::allocate(2, 2, 3, 8);
        ScopeSettings s;
        s.levels = 1;
        UOT_QVERIFY_THROWS_WITH(computeScopes(bad, s), "levels");
    }
};

QTEST_APPLESS_MAIN(TestScopes)
#include "test_scopes.moc"
