// Who sent an OTLP request, as the store budgets it (docs/app-kpis.md,
// "Senders"): the connection's peer, never a resource attribute the sender
// writes itself (a process rotating service.name got a new share per name).
//
// A peer is its IP address. A loopback peer (a process on this node: every
// Slurm job and host process posts to 127.0.0.1) is refined by the user id
// that owns its socket, read from the kernel's socket table
// (/proc/net/tcp, /proc/net/tcp6: the row whose local end is the peer's
// address and port and whose remote port is the agent's), so each local user
// is its own sender. When the row cannot be found the peer stays the address.
//
// Thread safety: pure functions (PeerKey reads the proc files).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::otlp {

// The budget key of a request from `address` (text, as http::Request::peer)
// port `port` to the agent's `local_port`; "" when the address is unknown.
std::string PeerKey(std::string_view address, uint16_t port, uint16_t local_port,
                    const std::string& proc_root = "/proc");

// The uid of the socket in `table` (the text of /proc/net/tcp or tcp6) whose
// local address is `local_hex` (as the kernel writes it, e.g. "0100007F:A1B2")
// and whose remote port is `remote_port`; nullopt when none.
std::optional<unsigned> SocketUid(std::string_view table, std::string_view local_hex,
                                  uint16_t remote_port);

}  // namespace gpuscope::otlp
