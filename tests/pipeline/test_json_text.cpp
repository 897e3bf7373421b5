// The JSON literals of the command line's --json output (app/cli/json_text.h):
// escapes, and valid UTF-8 whatever the bytes of a file name. Expectations are
// written by hand from RFC 8259 and the UTF-8 definition (RFC 3629): well-formed
// sequences pass through, every byte of an ill-formed one becomes \ufffd.
// Qt Test.
#include <QtTest>

#include <string>

#include "app/cli/json_text.h"

using uot::cli::jsonString;

class TestJsonText : public QObject {
    Q_OBJECT
private slots:
    void strings_data();
    void strings();
};

void TestJsonText::strings_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("json");
    const auto row = [](const char* name, std::string text, std::string json) {
        QTest::newRow(name) << QByteArray(text.data(), static_cast<int>(text.size()))
                            << QByteArray(json.data(), static_cast<int>(json.size()));
    };
    row("ascii", "photo.jpg", "\"photo.jpg\"");
    row("quote, backslash, newline, tab", "a\"b\\c\nd\te", "\"a\\\"b\\\\c\\nd\\te\"");
    row("control byte", std::string("x\x01y"), "\"x\\u0001y\"");
    row("two-byte e acute kept", "caf\xc3\xa9.jpg", "\"caf\xc3\xa9.jpg\"");
    row("four-byte emoji kept", "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
    row("Latin-1 e acute", "caf\xe9.jpg", "\"caf\\ufffd.jpg\"");
    row("stray continuation byte", "a\x80" "b", "\"a\\ufffdb\"");
    row("overlong slash", "\xc0\xaf", "\"\\ufffd\\ufffd\"");
    row("overlong three-byte", "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
    row("UTF-16 surrogate", "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
    row("above U+10FFFF", "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    row("truncated at the end", "x\xe2\x82", "\"x\\ufffd\\ufffd\"");
    row("lead byte then ASCII", "\xc3" "A", "\"\\ufffdA\"");
    row("byte 0xff", "\xff", "\"\\ufffd\"");
}

void TestJsonText::strings()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, json);
    const std::string out = jsonString(std::string(text.constData(), static_cast<std::size_t>(text.size())));
    QCOMPARE(QByteArray(out.data(), static_cast<int>(out.size())), json);
}

QTEST_GUILESS_MAIN(TestJsonText)
#include "test_json_text.moc"
