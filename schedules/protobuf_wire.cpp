#include "schedules/protobuf_wire.h"

#include <fmt/format.h>

namespace bubblesim {
namespace {

std::uint64_t tag(std::uint32_t field, WireType type) {
  return (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(type);
}

/// Reads a varint at `pos` of `data` (file offset `base`), advancing `pos`.
std::uint64_t varint_at(std::string_view data, std::size_t& pos, std::size_t base) {
  const std::size_t start = pos;
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= data.size())
      throw WireError(base + start, "truncated varint (the data ends inside it)");
    const auto byte = static_cast<std::uint8_t>(data[pos++]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  throw WireError(base + start, "varint longer than 10 bytes");
}

}  // namespace

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void ProtoWriter::varint(std::uint32_t field, std::uint64_t value) {
  append_varint(out_, tag(field, WireType::Varint));
  append_varint(out_, value);
}

void ProtoWriter::delimited(std::uint32_t field, std::string_view bytes) {
  append_varint(out_, tag(field, WireType::Delimited));
  append_varint(out_, bytes.size());
  out_.append(bytes);
}

void ProtoWriter::packed(std::uint32_t field, const std::vector<std::uint64_t>& values) {
  std::string body;
  for (std::uint64_t v : values) append_varint(body, v);
  delimited(field, body);
}

std::uint64_t ProtoReader::read_varint() { return varint_at(data_, pos_, base_); }

bool ProtoReader::next(ProtoField& field) {
  if (pos_ >= data_.size()) return false;
  field = ProtoField{};
  field.offset = offset();
  const std::uint64_t key = read_varint();
  if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff)
    throw WireError(field.offset, fmt::format("invalid field number {}", key >> 3));
  field.number = static_cast<std::uint32_t>(key >> 3);
  const std::uint64_t type = key & 7;
  auto fixed = [&](std::size_t n) {
    if (data_.size() - pos_ < n) throw WireError(field.offset, "truncated fixed-width field");
    for (std::size_t i = 0; i < n; ++i)
      field.value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + i]))
                     << (8 * i);
    pos_ += n;
  };
  if (type == 0) {
    field.value = read_varint();
  } else if (type == 1) {
    fixed(8);
  } else if (type == 5) {
    fixed(4);
  } else if (type == 2) {
    const std::uint64_t length = read_varint();
    if (length > data_.size() - pos_)
      throw WireError(field.offset, fmt::format("field {} claims {} bytes but only {} remain",
                                                field.number, length, data_.size() - pos_));
    field.bytes = data_.substr(pos_, static_cast<std::size_t>(length));
    pos_ += static_cast<std::size_t>(length);
  } else {
    throw WireError(field.offset,
                    fmt::format("unsupported wire type {} (field {})", type, field.number));
  }
  field.type = static_cast<WireType>(type);
  return true;
}

std::vector<std::uint64_t> repeated_varints(const ProtoField& field) {
  if (field.type != WireType::Delimited) return {field.value};
  std::vector<std::uint64_t> values;
  std::size_t pos = 0;
  while (pos < field.bytes.size()) values.push_back(varint_at(field.bytes, pos, field.offset));
  return values;
}

std::vector<std::pair<std::size_t, std::string_view>> split_delimited_stream(
    std::string_view data) {
  std::vector<std::pair<std::size_t, std::string_view>> messages;
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t start = pos;
    const std::uint64_t length = varint_at(data, pos, 0);
    if (length > data.size() - pos)
      throw WireError(start, fmt::format("message of {} bytes is truncated: the file has {} more",
                                         length, data.size() - pos));
    messages.emplace_back(pos, data.substr(pos, static_cast<std::size_t>(length)));
    pos += static_cast<std::size_t>(length);
  }
  return messages;
}

}  // namespace bubblesim
