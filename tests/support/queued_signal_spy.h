#pragma once
// A signal spy for signals emitted on another thread (the studio's SolveWorker).
//
// QSignalSpy (Qt 6.4) records through a direct connection: it appends to its
// list on the emitting thread while the test reads the list on its own thread,
// with no lock: a data race (ThreadSanitizer reports it, and a reallocation
// during a read can crash). QueuedSignalSpy records each emission on the thread
// it lives on, through a queued connection, as every receiver in the studio does.
//
// Under ThreadSanitizer with a Qt that is not built with it (Debian's), the
// hand-over through Qt's event queue (a mutex and futex inside libQt6Core) is
// invisible, so the arguments of a queued signal would be reported as shared
// without synchronisation. The spy marks that hand-over itself: a release on
// the emitting thread before Qt posts the event (a direct connection made
// first runs first), an acquire on the receiving thread when it is delivered.

#include <QList>
#include <QObject>
#include <QVariant>

#include <utility>

#if defined(__SANITIZE_THREAD__)
#define UOT_TEST_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UOT_TEST_THREAD_SANITIZER 1
#endif
#endif

#ifdef UOT_TEST_THREAD_SANITIZER
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace uot::test {

class QueuedSignalSpy final : public QObject, public QList<QList<QVariant>> {
public:
    template <typename Sender, typename Signal>
    QueuedSignalSpy(const Sender* sender, Signal signal)
    {
#ifdef UOT_TEST_THREAD_SANITIZER
        QObject::connect(sender, signal, this, [this] { __tsan_release(&m_handOver); }, Qt::DirectConnection);
#endif
        QObject::connect(
            sender, signal, this,
            [this](const auto&... arguments) {
#ifdef UOT_TEST_THREAD_SANITIZER
                __tsan_acquire(&m_handOver);
#endif
                append(QList<QVariant>{QVariant::fromValue(arguments)...});
            },
            Qt::QueuedConnection);
    }
    Q_DISABLE_COPY_MOVE(QueuedSignalSpy)

private:
    char m_handOver = 0;  // ThreadSanitizer's synchronisation object for the hand-over
};

}  // namespace uot::test
