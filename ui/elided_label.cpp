#include "ui/elided_label.h"

#include <QEvent>
#include <QFontMetrics>
#include <QStringList>
#include <QTextLayout>

#include <algorithm>

namespace uot::ui {

namespace {
// Widest a value asks for before it wraps (the dock's width decides the rest).
constexpr int kPreferredWidth = 320;
}  // namespace

ElidedLabel::ElidedLabel(int maxLines, QWidget* parent) : QLabel(parent), m_maxLines(std::max(1, maxLines))
{
    setWordWrap(false);
    setTextFormat(Qt::PlainText);
    // Asks for its width up to kPreferredWidth, and can be squeezed down to "-…".
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text)
{
    if (text == m_full && !QLabel::text().isEmpty()) return;
    m_full = text;
    relayout();
}

void ElidedLabel::setDescription(const QString& description)
{
    m_description = description;
    relayout();
}

QSize ElidedLabel::sizeHint() const
{
    const QFontMetrics fm(font());
    const int lines = shownLines();
    const QMargins m = contentsMargins();
    return {std::min(kPreferredWidth, fm.horizontalAdvance(m_full) + 2) + m.left() + m.right(),
            lines * fm.lineSpacing() + m.top() + m.bottom()};
}

QSize ElidedLabel::minimumSizeHint() const
{
    const QFontMetrics fm(font());
    const QMargins m = contentsMargins();
    const int lines = shownLines();
    return {fm.horizontalAdvance(QStringLiteral("-…")) + m.left() + m.right(), lines * fm.lineSpacing() + m.top() + m.bottom()};
}

int ElidedLabel::shownLines() const { return int(QLabel::text().count(QLatin1Char('\n'))) + 1; }

void ElidedLabel::resizeEvent(QResizeEvent* event)
{
    QLabel::resizeEvent(event);
    relayout();
}

void ElidedLabel::changeEvent(QEvent* event)
{
    QLabel::changeEvent(event);
    if (event->type() == QEvent::FontChange) relayout();
}

void ElidedLabel::relayout()
{
    const QFontMetrics fm(font());
    // Before the first layout the label has no width yet: the preferred one.
    const int width = contentsRect().width() > 0 ? contentsRect().width() : kPreferredWidth;
    QString whole = m_full;
    whole.replace(QLatin1Char('\n'), QChar::LineSeparator);
    QTextLayout layout(whole, font());
    QTextOption option;
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    layout.setTextOption(option);
    QStringList lines;
    bool elided = false;
    layout.beginLayout();
    for (;;) {
        QTextLine line = layout.createLine();
        if (!line.isValid()) break;
        line.setLineWidth(width);
        if (int(lines.size()) == m_maxLines - 1) {
            // The last line takes the rest of the value, cut with "…" where it does not fit.
            const QString rest = whole.mid(line.textStart()).replace(QChar::LineSeparator, QLatin1Char(' ')).trimmed();
            const QString shown = fm.elidedText(rest, Qt::ElideRight, width);
            elided = shown != rest;
            lines << shown;
            break;
        }
        lines << whole.mid(line.textStart(), line.textLength()).trimmed();
    }
    layout.endLayout();
    m_elided = elided;
    const QString shown = lines.join(QLatin1Char('\n'));
    const bool heightChanged = shown.count(QLatin1Char('\n')) != QLabel::text().count(QLatin1Char('\n'));
    QLabel::setText(shown);
    setToolTip(!elided ? m_description
               : m_description.isEmpty() ? m_full
                                         : m_description + QStringLiteral("\n\n") + m_full);
    if (heightChanged) updateGeometry();
}

}  // namespace uot::ui
