#include "core/transport/solve_result.h"

#include <cmath>

#include "core/transport/solve_options.h"
#include "core/transport/uot_error.h"

namespace uot {

SolveControl continuedControl(const SolveControl& control, int doneIterations, double doneSeconds,
                              std::uint64_t doneBytes, std::function<void(SolveProgress&)> adjust)
{
    SolveControl continued = control;
    if (!control.onProgress) return continued;
    continued.onProgress = [&control, doneIterations, doneSeconds, doneBytes,
                            adjust = std::move(adjust)](const SolveProgress& p) {
        SolveProgress q = p;
        q.iteration += doneIterations;
        q.elapsedSeconds += doneSeconds;
        q.bytesMoved += doneBytes;
        if (adjust) adjust(q);
        control.onProgress(q);
    };
    return continued;
}

namespace {
std::vector<double> exponentiate(const std::vector<double>& logs)
{
    std::vector<double> out(logs.size());
    for (std::size_t i = 0; i < logs.size(); ++i) out[i] = std::exp(logs[i]);
    return out;
}
}  // namespace

std::vector<double> SolveResult::u() const { return exponentiate(logU); }
std::vector<double> SolveResult::v() const { return exponentiate(logV); }

std::string toString(NumericalStatus status)
{
    switch (status) {
    case NumericalStatus::Ok: return "ok";
    case NumericalStatus::SwitchedToLogDomain: return "switched-to-log-domain";
    case NumericalStatus::Underflow: return "underflow";
    case NumericalStatus::NotFinite: return "not-finite";
    }
    return "unknown";
}

std::string toString(IterationMode mode)
{
    return mode == IterationMode::Plain ? "plain" : "translation-invariant";
}

IterationMode parseIterationMode(const std::string& text)
{
    if (text == "plain") return IterationMode::Plain;
    if (text == "ti" || text == "translation-invariant") return IterationMode::TranslationInvariant;
    throw Error(ErrorCode::InvalidArgument,
                "unknown iteration mode '" + text + "': choose plain or translation-invariant (ti)");
}

IterationMode resolveIterationMode(const std::string& modeRequest, const std::string& solverRequest)
{
    if (modeRequest != "auto") return parseIterationMode(modeRequest);
    return solverRequest == "auto" ? IterationMode::TranslationInvariant : IterationMode::Plain;
}

}  // namespace uot

namespace uot {

std::string toString(Acceleration acceleration)
{
    switch (acceleration) {
    case Acceleration::None: return "none";
    case Acceleration::Relax: return "relax";
    case Acceleration::Auto: return "auto";
    }
    return "none";
}

Acceleration parseAcceleration(const std::string& text)
{
    if (text == "none") return Acceleration::None;
    if (text == "relax") return Acceleration::Relax;
    if (text == "auto") return Acceleration::Auto;
    throw Error(ErrorCode::InvalidArgument,
                "unknown acceleration '" + text + "': choose none, relax (fixed --omega) or auto (omega from the rate)");
}

Acceleration resolveAcceleration(const std::string& request, const std::string& solverRequest)
{
    if (!request.empty()) return parseAcceleration(request);
    return solverRequest == "auto" ? Acceleration::Auto : Acceleration::None;
}

}  // namespace uot

namespace uot {

std::string toString(StoppingRule rule) { return rule == StoppingRule::Pot ? "pot" : "potentials"; }

StoppingRule parseStoppingRule(const std::string& text)
{
    if (text == "potentials") return StoppingRule::Potentials;
    if (text == "pot") return StoppingRule::Pot;
    throw Error(ErrorCode::InvalidArgument,
                "unknown stopping rule '" + text + "': choose potentials (the default) or pot (POT's rule, for "
                "iteration-for-iteration comparisons with POT)");
}

}  // namespace uot
