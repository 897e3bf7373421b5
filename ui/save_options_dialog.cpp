#include "ui/save_options_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>

#include "ui/parameter_tooltip.h"

namespace uot::ui {

namespace {

// How the dialog names a choice of entry `name` (the table's spelling otherwise).
QString choiceLabel(const QString& name, const QString& spelling)
{
    if (name == "output-profile" && spelling == "source") return QObject::tr("the source's own profile");
    static const QMap<QString, QString> labels = {
        {"source", QObject::tr("same as the source")},
        {"8", QObject::tr("8 bit")},
        {"16", QObject::tr("16 bit")},
        {"auto", QObject::tr("as the result")},
        {"color", QObject::tr("color (3 channels)")},
        {"gray", QObject::tr("gray (luminance only)")},
        {"srgb", QObject::tr("sRGB")},
        {"display-p3", QObject::tr("Display P3")},
        {"adobe-rgb", QObject::tr("Adobe RGB (1998)")},
    };
    return labels.value(spelling, spelling);
}

// The rows a format offers, by entry name.
QStringList rowsFor(const QString& extension)
{
    const QString ext = extension.toLower();
    const bool lossy = ext == "jpg" || ext == "jpeg" || ext == "webp";
    const bool deep = ext == "png" || ext == "tif" || ext == "tiff";
    QStringList rows;
    if (deep) rows << "depth";
    if (lossy) rows << "jpeg-quality";
    if (lossy || deep) rows << "output-color";
    if (ext != "webp" && (lossy || deep)) rows << "output-profile";  // WebP and BMP stay sRGB
    return rows;
}

}  // namespace

bool SaveOptionsDialog::hasOptions(const QString& extension) { return !rowsFor(extension).isEmpty(); }

SaveOptionsDialog::SaveOptionsDialog(const QString& extension, const StudioSaveOptions& options, QWidget* parent)
    : QDialog(parent), m_start(options)
{
    setWindowTitle(tr("Save Options"));
    setObjectName("saveOptionsDialog");
    auto* form = new QFormLayout(this);
    const QStringList rows = rowsFor(extension);
    for (const QString& name : StudioSaveOptions::boundNames()) {  // in the table's order
        if (!rows.contains(name)) continue;
        const params::Parameter& entry = params::parameter(name.toStdString());
        QWidget* editor = nullptr;
        if (entry.kind == params::Kind::Integer) {
            auto* box = new QSpinBox;
            box->setRange(int(entry.min), int(entry.max));
            box->setValue(options.shownValue(name).toInt());
            editor = box;
        } else {
            auto* box = new QComboBox;
            for (const std::string& choice : entry.choiceList()) {
                const QString spelling = QString::fromStdString(choice);
                box->addItem(choiceLabel(name, spelling), spelling);
            }
            box->setCurrentIndex(std::max(0, box->findData(options.shownValue(name))));
            editor = box;
        }
        editor->setObjectName(name + "Editor");
        editor->setToolTip(parameterToolTip(entry));
        form->addRow(QString::fromStdString(entry.studioTitle()), editor);
        m_editors.insert(name, editor);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

StudioSaveOptions SaveOptionsDialog::options() const
{
    StudioSaveOptions o = m_start;
    for (auto it = m_editors.begin(); it != m_editors.end(); ++it) {
        if (auto* box = qobject_cast<QSpinBox*>(it.value())) o.setShownValue(it.key(), QString::number(box->value()));
        else if (auto* box = qobject_cast<QComboBox*>(it.value())) o.setShownValue(it.key(), box->currentData().toString());
    }
    return o;
}

}  // namespace uot::ui
