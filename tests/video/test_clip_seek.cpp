// Seeking ahead in a video (ClipReader::seekForwardTo) against reading every
// frame: a clip of 300 frames (each different) written through the pipeline
// as H.264 (clip_test_frames.h), then the same frames reached both ways. The frames must be equal,
// byte for byte, and the reader must really seek where a key frame lies
// beyond the frames read so far (libx264 puts one every 250 frames at most).

#include <QTemporaryDir>
#include <QTest>

#include "core/video/clip_reader.h"
#include "tests/support/qt_checks.h"
#include "tests/video/clip_test_frames.h"

using namespace uot;

namespace {

constexpr int kFrames = 300;

// The frame `index` of the reader's clip, reached by skipping frames from `position`
// (seeking first when `seek`); empty when the clip ends first or another frame comes.
Image readAt(ClipReader& reader, long long& position, long long index, bool seek, int& seeks)
{
    if (seek && reader.seekForwardTo(index)) {
        position = index;
        ++seeks;
    }
    for (; position < index; ++position)
        if (!reader.skipFrame()) return {};
    ClipItem item;
    while (reader.next(item) && !item.frame) {}
    if (!item.frame || item.frame->index != index) return {};
    ++position;
    return std::move(item.frame->image);
}

}  // namespace

class ClipSeekTest : public QObject {
    Q_OBJECT

private slots:
    void seekingReachesTheFramesReadingReaches()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string clip = test::writeTestClip(dir, kFrames, 64, 48);

        ClipReadOptions options;
        options.countFrames = false;
        const auto reading = ClipReader::open(clip, options);
        const auto seeking = ClipReader::open(clip, options);
        long long readPosition = 0, seekPosition = 0;
        int seeks = 0, unused = 0;
        for (const long long index : {3LL, 120LL, 260LL, 261LL, 299LL}) {
            const Image expected = readAt(*reading, readPosition, index, false, unused);
            const Image got = readAt(*seeking, seekPosition, index, true, seeks);
            UOT_QVERIFY_MSG(!expected.data.empty() && !got.data.empty(), "frame " << index << " not reached");
            UOT_QVERIFY_MSG(got.data == expected.data, "frame " << index << " differs after seeking");
        }
        QVERIFY2(seeks >= 1, "no seek: every frame was decoded");
        // Read on after a seek: the frames follow one by one.
        ClipItem a, b;
        QVERIFY(!reading->next(a) && !seeking->next(b));  // both at the end (299 was the last)
    }
};

QTEST_GUILESS_MAIN(ClipSeekTest)
#include "test_clip_seek.moc"
