#pragma once
// Parsers for quantities written with units: "1.5ms", "250us", "25GB/s", "400Gbps", "80GiB",
// "989TFLOPS". SI prefixes are powers of 1000, binary prefixes (Ki, Mi, Gi, Ti, Pi) powers of
// 1024; a lower-case 'b' or "bit" means bits. A number without a unit is an error that names the
// units to add. Errors are QuantityError with a message that does not include a location (the
// caller, which knows the file position, adds it).

#include <stdexcept>
#include <string_view>

#include "sim/units/bytes.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

class QuantityError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

Time parse_time(std::string_view text);
Bytes parse_bytes(std::string_view text);
Bandwidth parse_bandwidth(std::string_view text);
FlopRate parse_flop_rate(std::string_view text);

/// The units each parser accepts, for error messages ("ps, ns, us, ms, s, min, h").
std::string_view time_units_help();
std::string_view bytes_units_help();
std::string_view bandwidth_units_help();
std::string_view flop_rate_units_help();

}  // namespace bubblesim
