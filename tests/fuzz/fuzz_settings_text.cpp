// libFuzzer target: the studio's settings text (Edit > Paste Settings,
// ui/settings_library fromText), Qt Core only. Besides memory safety, settings
// it accepts must survive copy and paste unchanged: toText of them, pasted
// again, gives settings whose text is the same (the copied text is a fixed point).

#include <QByteArray>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "ui/settings_library.h"

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_settings_text: %s\n", what);
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    namespace library = uot::ui::settings_library;
    const QString text = QString::fromUtf8(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    const auto pasted = library::fromText(text);
    if (!pasted) return 0;
    const QString copied = library::toText(*pasted);
    check(!copied.isEmpty(), "accepted settings could not be copied as text");
    const auto again = library::fromText(copied);
    check(again.has_value(), "the copied text of accepted settings is refused");
    check(library::toText(*again) == copied, "copy -> paste -> copy changed the settings");
    return 0;
}
