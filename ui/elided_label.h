#pragma once
// A label for values that may be longer than the space they get: the text is
// wrapped over at most a few lines and the last line ends in "…" when the rest
// does not fit. The whole value is then in the tooltip, below the label's
// description, so nothing is lost by clipping.

#include <QLabel>
#include <QString>

namespace uot::ui {

class ElidedLabel final : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(int maxLines = 2, QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(ElidedLabel)

    // The value, whole; text() is what is shown (elided when it does not fit).
    void setFullText(const QString& text);
    QString fullText() const { return m_full; }
    // What the value means: the tooltip, with the whole value below it when elided.
    void setDescription(const QString& description);
    bool isElided() const { return m_elided; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void relayout();
    int shownLines() const;

    int m_maxLines;
    QString m_full;
    QString m_description;
    bool m_elided = false;
};

}  // namespace uot::ui
