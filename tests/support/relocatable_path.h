#pragma once
// A path compiled into a test (the source tree's sample images, the studio
// executable) that an environment variable of the same name replaces when set,
// so that the bundles of scripts/studio_bundle.sh and scripts/qt_test_bundle.sh
// run on a machine without this source tree.

#include <QString>
#include <QtGlobal>

namespace uot::test {

inline QString relocatablePath(const char* variable, const QString& builtIn)
{
    const QString fromEnvironment = qEnvironmentVariable(variable);
    return fromEnvironment.isEmpty() ? builtIn : fromEnvironment;
}

}  // namespace uot::test
