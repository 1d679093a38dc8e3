#pragma once
// Protocol Buffers wire format, just enough for Chakra execution traces (chakra_et.h): varints,
// length-delimited fields and the varint length prefix of a message stream. No reflection, no
// schema: callers write and read fields by number. Readers never trust a length: everything past
// the end of the data is a WireError naming the byte offset.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bubblesim {

/// Malformed wire data at byte `offset` (from the start of the file).
class WireError : public std::runtime_error {
 public:
  WireError(std::size_t offset, const std::string& message)
      : std::runtime_error(message), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, Delimited = 2, Fixed32 = 5 };

/// Builds one message: fields are appended in call order.
class ProtoWriter {
 public:
  void varint(std::uint32_t field, std::uint64_t value);
  void delimited(std::uint32_t field, std::string_view bytes);
  /// A repeated integer field, packed (proto3's default encoding).
  void packed(std::uint32_t field, const std::vector<std::uint64_t>& values);
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

/// Appends `value` as a base-128 varint.
void append_varint(std::string& out, std::uint64_t value);

/// One field as read: `value` for varints and fixed ints, `bytes` for delimited fields.
struct ProtoField {
  std::uint32_t number = 0;
  WireType type = WireType::Varint;
  std::uint64_t value = 0;
  std::string_view bytes;
  std::size_t offset = 0;  // of the field's tag, from the start of the file
};

/// Reads the fields of one message (`data` begins at file offset `base`).
class ProtoReader {
 public:
  ProtoReader(std::string_view data, std::size_t base) : data_(data), base_(base) {}
  /// The next field into `field`; false at the end. Throws WireError.
  bool next(ProtoField& field);
  std::size_t offset() const { return base_ + pos_; }

 private:
  std::uint64_t read_varint();
  std::string_view data_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

/// The integers of a repeated field given either packed (`field.bytes`) or as one varint.
std::vector<std::uint64_t> repeated_varints(const ProtoField& field);

/// Splits a stream of varint-length-prefixed messages; each entry is (offset of its body, body).
std::vector<std::pair<std::size_t, std::string_view>> split_delimited_stream(std::string_view data);

}  // namespace bubblesim
