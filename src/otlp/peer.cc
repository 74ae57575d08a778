#include "otlp/peer.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/text.h"

namespace gpuscope::otlp {
namespace {

// The socket tables are read whole; on a node with a million sockets the
// lookup gives up (the peer stays its address) rather than read more.
constexpr std::size_t kMaxTableBytes = 64 << 20;

// The address as /proc/net/tcp{,6} writes it: each 32-bit word of the address in the
// host's order, as %08X, then ":" and the port as %04X.
std::string KernelHex(const unsigned char* bytes, std::size_t size, uint16_t port) {
  std::string out;
  char word[9];
  for (std::size_t i = 0; i < size; i += 4) {
    uint32_t value = 0;
    std::memcpy(&value, bytes + i, 4);
    std::snprintf(word, sizeof(word), "%08X", value);
    out += word;
  }
  char tail[6];
  std::snprintf(tail, sizeof(tail), ":%04X", port);
  return out + tail;
}

std::string ReadTable(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  char buffer[65536];
  while (in && text.size() < kMaxTableBytes) {
    in.read(buffer, sizeof(buffer));
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  return text.size() < kMaxTableBytes ? text : std::string();
}

// The next white-space separated field of `line`.
std::string_view Field(std::string_view& line) {
  line = base::Trim(line, " ");
  const std::size_t end = line.find(' ');
  std::string_view field = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return field;
}

}  // namespace

std::optional<unsigned> SocketUid(std::string_view table, std::string_view local_hex,
                                  uint16_t remote_port) {
  char port_hex[6];
  std::snprintf(port_hex, sizeof(port_hex), ":%04X", remote_port);
  base::PopLine(table);  // the header
  while (!table.empty()) {
    std::string_view line = base::PopLine(table);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
    Field(line);
    if (Field(line) != local_hex) continue;
    if (!Field(line).ends_with(port_hex)) continue;
    for (int skip = 0; skip < 4; ++skip) Field(line);
    const std::string_view uid = Field(line);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(uid.data(), uid.data() + uid.size(), value);
    if (ec == std::errc() && end == uid.data() + uid.size()) return value;
  }
  return std::nullopt;
}

std::string PeerKey(std::string_view address, uint16_t port, uint16_t local_port,
                    const std::string& proc_root) {
  if (address.empty()) return "";
  const std::string text(address);
  std::array<unsigned char, 16> bytes{};
  std::optional<unsigned> uid;
  if (inet_pton(AF_INET, text.c_str(), bytes.data()) == 1) {
    if (bytes[0] != 127) return text;
    uid =
        SocketUid(ReadTable(proc_root + "/net/tcp"), KernelHex(bytes.data(), 4, port), local_port);
  } else if (inet_pton(AF_INET6, text.c_str(), bytes.data()) == 1) {
    static constexpr std::array<unsigned char, 16> kLoopback = {0, 0, 0, 0, 0, 0, 0, 0,
                                                                0, 0, 0, 0, 0, 0, 0, 1};
    const bool mapped_loopback =
        std::all_of(bytes.begin(), bytes.begin() + 10, [](unsigned char b) { return b == 0; }) &&
        bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127;
    if (mapped_loopback) {  // an IPv4 client of a dual-stack socket: its row is in tcp
      uid = SocketUid(ReadTable(proc_root + "/net/tcp"), KernelHex(bytes.data() + 12, 4, port),
                      local_port);
    } else if (bytes == kLoopback) {
      uid = SocketUid(ReadTable(proc_root + "/net/tcp6"), KernelHex(bytes.data(), 16, port),
                      local_port);
    } else {
      return text;
    }
  } else {
    return text;
  }
  return uid ? text + " uid " + std::to_string(*uid) : text;
}

}  // namespace gpuscope::otlp
