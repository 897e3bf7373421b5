#pragma once
// The tooltip of a widget that edits an entry of the parameter table: its
// description (the --help text, first letter capitalised) and, for numbers,
// what it takes. One text for the parameters dock and the Save Options.

#include <QString>

#include "core/params/parameter_schema.h"

namespace uot::ui {

QString parameterToolTip(const params::Parameter& p);

}  // namespace uot::ui
