#include "ui/scopes_dock.h"

#include <QComboBox>
#include <QPainter>
#include <QTabBar>
#include <QVBoxLayout>

#include <algorithm>

#include "ui/studio_session.h"

namespace uot::ui {

namespace {

// A gray plot tinted: each pixel's brightness times the tint (and the gain, clipped at white).
QImage tinted(const QImage& gray, QColor tint, int gain = 1)
{
    QImage out(gray.size(), QImage::Format_RGB32);
    for (int y = 0; y < gray.height(); ++y) {
        const uchar* in = gray.constScanLine(y);
        auto* px = reinterpret_cast<QRgb*>(out.scanLine(y));
        for (int x = 0; x < gray.width(); ++x)
            px[x] = qRgb(std::min(255, gain * in[x] * tint.red() / 255), std::min(255, gain * in[x] * tint.green() / 255),
                         std::min(255, gain * in[x] * tint.blue() / 255));
    }
    return out;
}

}  // namespace

ScopesDock::ScopesDock(StudioSession* session, QWidget* parent) : QWidget(parent), m_session(session)
{
    auto* layout = new QVBoxLayout(this);
    m_image = new QComboBox;
    m_image->addItems({tr("Source"), tr("Reference"), tr("Result")});
    m_image->setCurrentIndex(2);
    m_kind = new QTabBar;
    for (const QString& name : {tr("Waveform"), tr("Parade"), tr("Vectorscope")}) m_kind->addTab(name);
    m_kind->setExpanding(false);
    layout->addWidget(m_image);
    layout->addWidget(m_kind);
    layout->addStretch(1);
    connect(m_image, &QComboBox::currentIndexChanged, this, &ScopesDock::redraw);
    connect(m_kind, &QTabBar::currentChanged, this, &ScopesDock::redraw);
    connect(m_session, &StudioSession::scopesReady, this, &ScopesDock::redraw);
    setMinimumHeight(220);
}

void ScopesDock::select(int image, int kind)
{
    m_image->setCurrentIndex(image);
    m_kind->setCurrentIndex(kind);
    redraw();
}

void ScopesDock::redraw()
{
    m_picture = {};
    if (m_session->hasScopes()) {
        const auto image = ScopeImage(m_image->currentIndex());
        switch (ScopeKind(m_kind->currentIndex())) {
        case ScopeKind::Waveform:
            m_picture = tinted(m_session->scopeImage(image, ScopeKind::Waveform), QColor(170, 255, 170));
            break;
        case ScopeKind::Vectorscope:
            // A photo's chroma sits near the centre, in few cells: brighter than the waveform.
            m_picture = tinted(m_session->scopeImage(image, ScopeKind::Vectorscope), QColor(255, 255, 255), 2);
            break;
        case ScopeKind::Parade: {
            const QColor tints[3] = {QColor(255, 80, 80), QColor(80, 255, 80), QColor(90, 140, 255)};
            const QImage r = m_session->scopeImage(image, ScopeKind::Parade, 0);
            if (r.isNull()) break;
            m_picture = QImage(3 * r.width() + 8, r.height(), QImage::Format_RGB32);
            m_picture.fill(Qt::black);
            QPainter painter(&m_picture);
            for (int c = 0; c < 3; ++c)
                painter.drawImage(c * (r.width() + 4), 0, tinted(m_session->scopeImage(image, ScopeKind::Parade, c), tints[c]));
            break;
        }
        }
    }
    update();
}

void ScopesDock::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    const int top = m_kind->geometry().bottom() + 6;
    const QRect area = rect().adjusted(4, top, -4, -4);
    painter.fillRect(area, Qt::black);
    if (m_picture.isNull()) {
        painter.setPen(Qt::gray);
        painter.drawText(area, Qt::AlignCenter | Qt::TextWordWrap, tr("The scopes appear after a run."));
        return;
    }
    const bool vectorscope = m_kind->currentIndex() == int(ScopeKind::Vectorscope);
    QSize size = m_picture.size().scaled(area.size(), vectorscope ? Qt::KeepAspectRatio : Qt::IgnoreAspectRatio);
    QRect target(QPoint(0, 0), size);
    target.moveCenter(area.center());
    painter.setRenderHint(QPainter::SmoothPixmapTransform);
    painter.drawImage(target, m_picture);
    painter.setPen(QColor(90, 90, 90));
    if (vectorscope) {
        // The graticule: the axes through the neutral centre and the circle of |Cb|, |Cr| = 0.5.
        painter.drawEllipse(target);
        painter.drawLine(target.center().x(), target.top(), target.center().x(), target.bottom());
        painter.drawLine(target.left(), target.center().y(), target.right(), target.center().y());
    } else {
        for (int k = 1; k < 4; ++k) {  // 25, 50 and 75 % lines
            const int y = target.top() + target.height() * k / 4;
            painter.drawLine(target.left(), y, target.right(), y);
        }
    }
}

}  // namespace uot::ui
