#include "bench/tune/TuneVersus.h"

#include <stdexcept>
#include <vector>

namespace nfsrdma::bench {

VersusSetting parseVersus(KnobSpace& space, const std::string& text) {
  VersusSetting v;
  const auto colon = text.find(':');
  const auto eq = text.find('=');
  if (colon != std::string::npos && (eq == std::string::npos || colon < eq)) {
    v.label = text.substr(0, colon);
    v.keys = text.substr(colon + 1);
    if (v.label.empty()) {
      throw std::invalid_argument("--versus '" + text + "': the label before ':' is empty");
    }
  } else {
    v.keys = text;
    v.label = text;
  }
  v.setting = settingFromKeys(space, v.keys, "--versus");
  return v;
}

Setting settingInSpace(KnobSpace& space, const std::vector<Knob>& knobs, const Setting& setting,
                       const Setting& start) {
  const std::string keys = changedKeys(knobs, setting, start);
  if (keys.empty()) {
    Setting s;
    for (const Knob& k : space.knobs) s.push_back(k.start);
    return s;
  }
  return settingFromKeys(space, keys, "the recommendation");
}

VersusRun measureVersus(const VersusSetting& v, const Setting& recommendation, int pairs,
                        const std::function<double(const Setting&)>& run) {
  VersusRun out;
  out.label = v.label;
  out.keys = v.keys;
  std::vector<double> ratios;
  double recSum = 0, versusSum = 0;
  try {
    for (int i = 0; i < pairs; ++i) {
      const double r = run(recommendation);
      const double w = run(v.setting);
      recSum += r;
      versusSum += w;
      if (w > 0) ratios.push_back(r / w);
    }
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  out.recommendationMean = pairs > 0 ? recSum / pairs : 0;
  out.versusMean = pairs > 0 ? versusSum / pairs : 0;
  out.ratio = ratioInterval(ratios);
  return out;
}

}  // namespace nfsrdma::bench
