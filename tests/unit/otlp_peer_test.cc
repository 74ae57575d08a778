// Who sent an OTLP request (otlp/peer.h): the peer's address, and for a local
// peer the uid that owns its socket, found in the kernel's socket table.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "otlp/peer.h"

namespace gpuscope::otlp {
namespace {

// Two rows of /proc/net/tcp: the client's socket (127.0.0.1:41394 -> :9400, uid 1000) and the
// server's end of the same connection (uid 0).
constexpr std::string_view kTable =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n"
    "   0: 0100007F:A1B2 0100007F:24B8 01 00000000:00000000 00:00000000 00000000  1000        0 "
    "81234 1 0000000000000000 20 4 30 10 -1\n"
    "   1: 0100007F:24B8 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 "
    "81235 1 0000000000000000 20 4 30 10 -1\n";

TEST(Peer, TheUidOfTheClientsSocketIsRead) {
  EXPECT_EQ(SocketUid(kTable, "0100007F:A1B2", 9400), 1000u);
  EXPECT_EQ(SocketUid(kTable, "0100007F:24B8", 41394), 0u);  // the server's own end
  EXPECT_FALSE(SocketUid(kTable, "0100007F:A1B2", 9401));    // another connection
  EXPECT_FALSE(SocketUid("", "0100007F:A1B2", 9400));
}

TEST(Peer, ARemotePeerIsItsAddress) {
  EXPECT_EQ(PeerKey("10.1.2.3", 5000, 9400), "10.1.2.3");
  EXPECT_EQ(PeerKey("2001:db8::7", 5000, 9400), "2001:db8::7");
  EXPECT_EQ(PeerKey("", 5000, 9400), "");
}

// A real loopback connection: the key names this process's uid, which a local sender cannot
// choose (a process rotating service.name stays one sender).
TEST(Peer, ALocalPeerIsItsAddressAndTheUidOfItsSocket) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t size = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &size);
  const uint16_t server_port = ntohs(addr.sin_port);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  sockaddr_in local{};
  size = sizeof(local);
  getsockname(client, reinterpret_cast<sockaddr*>(&local), &size);
  const std::string expected = "127.0.0.1 uid " + std::to_string(geteuid());
  EXPECT_EQ(PeerKey("127.0.0.1", ntohs(local.sin_port), server_port), expected);
  // As a dual-stack server sees an IPv4 client.
  EXPECT_EQ(PeerKey("::ffff:127.0.0.1", ntohs(local.sin_port), server_port),
            "::ffff:127.0.0.1 uid " + std::to_string(geteuid()));
  // No such connection: the address alone.
  EXPECT_EQ(PeerKey("127.0.0.1", ntohs(local.sin_port), server_port + 1), "127.0.0.1");
  close(client);
  close(listener);
}

}  // namespace
}  // namespace gpuscope::otlp
